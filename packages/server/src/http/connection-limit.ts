/**
 * listen.maxConnections: how many connections the service holds, and which one gives way at the
 * limit. Each connection is a file descriptor; past the process's file limit the kernel refuses
 * every new connection, a legitimate client's as much as an attacker's, and the service's own
 * files (an engine's connection, a sandbox's pipes) fail too. 1,100 idle sockets against a
 * 1,024 file limit stopped every request (docs/reliability.md, "Slow clients").
 *
 * At the limit, a new connection takes the place of the oldest connection that has no request
 * in flight: first one that has not started a request yet (a slowloris socket trickling its
 * headers, or one that never sends any), then one idle between requests, the one whose last
 * request started longest ago (its client reconnects, as it would after the keep-alive timeout). An attacker's sockets never complete a request, so
 * they make room for real clients instead of locking them out; a real client's request head
 * arrives within a round trip and is then safe.
 *
 * When every connection has a request in flight, the service is busy with real work. node:http's
 * own limit would drop the new socket, which a client sees as a reset with nothing to go on.
 * Here the new connection is held instead, beyond the limit, only until its request head
 * arrives, and that request is answered 503 `too_many_connections` with retry-after and the
 * connection closed: a client and a load balancer both know a 503 as "try again, maybe
 * elsewhere". At most REFUSAL_ROOM connections wait for that answer at once (each at most
 * headersTimeoutMs); past that, new sockets are destroyed as node:http would.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Connections over the limit that may wait for their request to be answered 503. */
const REFUSAL_ROOM = 64;

export class ConnectionLimit {
  /** Held connections that have not started a request yet: oldest first. */
  private readonly fresh = new Set<Socket>();
  /**
   * Held connections that have started a request, the one whose latest request started longest
   * ago first. Whether one has a request in flight now is read from node:http at eviction time
   * (responseOn), not tracked per request: a 'close' listener on every response cost a third
   * of the service's throughput on the scripted backend (docs/benchmarks.md).
   */
  private readonly served = new Set<Socket>();
  /** Connections over the limit whose request gets the 503. */
  private readonly refused = new Set<Socket>();

  constructor(readonly max: number) {}

  /** From the server's 'connection' event. */
  admit(socket: Socket): void {
    // Every connection held within the limit is in one of the two sets.
    if (this.fresh.size + this.served.size >= this.max && !this.evictOne()) {
      if (this.refused.size >= REFUSAL_ROOM) {
        socket.destroy();
        return;
      }
      this.refused.add(socket);
      socket.once('close', () => this.refused.delete(socket));
      return;
    }
    this.fresh.add(socket);
    socket.once('close', () => this.forget(socket));
  }

  /** Whether a request on this connection is to be answered 503 (it came in over the limit). */
  refuses(socket: Socket): boolean {
    return this.refused.has(socket);
  }

  /** A request arrived on `socket`: its connection goes to the back of the line to give way. */
  requestStarted(socket: Socket): void {
    // A connection over the limit is in neither set: it is answered 503, never held.
    if (this.fresh.delete(socket) || this.served.delete(socket)) this.served.add(socket);
  }

  /**
   * The response in flight on `socket`, if a request is being answered there: node:http's own
   * record of it (set when the response is attached to its socket, cleared when it finishes).
   */
  responseOn(socket: Socket): ServerResponse | undefined {
    return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
  }

  /** Closes the connection that gives way at the limit; false when every one is busy. */
  private evictOne(): boolean {
    let socket = first(this.fresh);
    if (socket === undefined)
      for (const candidate of this.served)
        if (this.responseOn(candidate) === undefined) {
          socket = candidate;
          break;
        }
    if (socket === undefined) return false;
    this.forget(socket);
    socket.destroy();
    return true;
  }

  private forget(socket: Socket): void {
    this.fresh.delete(socket);
    this.served.delete(socket);
  }
}

function first<T>(set: Set<T>): T | undefined {
  for (const value of set) return value;
  return undefined;
}
