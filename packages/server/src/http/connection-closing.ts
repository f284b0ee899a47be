/**
 * Graceful close over keep-alive connections. Node's server.close() ends the connections that
 * are idle when closing starts; one whose request is in flight then stays open after its reply,
 * since the reply promised keep-alive. A client that keeps its connection open would hold
 * app.close() until the grace period ran out and the process exited 1. So once closing starts,
 * every reply still to go out closes its connection after its last byte: app.ts says
 * `Connection: close` on JSON replies, and the SSE writer, whose headers may have gone out
 * before closing started, ends the socket itself.
 */
export class ConnectionClosing {
  private closing = false;

  /** From app.close(): before the server stops listening. */
  start(): void {
    this.closing = true;
  }

  get started(): boolean {
    return this.closing;
  }
}
