/**
 * One HTTP/1.1 exchange over a raw loopback socket: the fuzz writes the request's bytes as they
 * are (a content-length that lies, a header node:http's client would refuse, bytes that are not
 * UTF-8), ends its side when told to, and reads until the service closes the connection (every
 * request says `connection: close`). The reply is parsed just enough to check it: status,
 * headers, and the body, chunked or not.
 */
import { connect } from 'node:net';

export interface RawReply {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
  /** Whether the service closed the connection within CLOSE_GRACE_MS of a whole reply, as `connection: close` asks. */
  closed: boolean;
}

/** What came back: a reply, or why there was none (`closed`, `timeout`, `ECONNREFUSED`...). */
export type RawOutcome = { reply: RawReply } | { failure: string };

/** How long after a whole reply the service has to close the connection (a busy loop delays it: a shorter grace counted stalls). */
const CLOSE_GRACE_MS = 1_000;

export function rawExchange(
  port: number,
  request: Buffer,
  endAfterWrite: boolean,
  timeoutMs: number,
): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    let whole: Parsed | undefined;
    const finish = (outcome: RawOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    let timer = setTimeout(() => finish({ failure: 'timeout' }), timeoutMs);
    const ended = (failure: string): void => {
      const parsed = whole ?? parseReply(Buffer.concat(chunks));
      // A reset after a whole reply (the service closing a connection with unread bytes) is still that reply.
      finish(parsed === undefined ? { failure } : { reply: { ...parsed, closed: true } });
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (whole !== undefined) return;
      const parsed = parseReply(Buffer.concat(chunks));
      if (parsed === undefined || !parsed.whole) return;
      whole = parsed;
      clearTimeout(timer);
      // setImmediate: after a stall of this process, timers run before pending I/O; the close that
      // has already come in is read first, and is not taken for a connection left open.
      timer = setTimeout(() => setImmediate(() => finish({ reply: { ...parsed, closed: false } })), CLOSE_GRACE_MS);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => ended(error.code ?? error.message));
    // 'end' (the service's FIN, read in the poll phase) as well as 'close', which comes a turn
    // later, in the close phase: after this process stalled, the grace timer's setImmediate ran
    // first and counted a closed connection as left open.
    socket.on('end', () => ended(chunks.length === 0 ? 'closed' : 'unparsable reply'));
    socket.on('close', () => ended(chunks.length === 0 ? 'closed' : 'unparsable reply'));
    socket.write(request, () => {
      if (endAfterWrite) socket.end();
    });
  });
}

interface Parsed {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
  /** Whether the body is all there (by content-length or the last chunk); without either, only a close says. */
  whole: boolean;
}

/** The first final reply in what was received: interim 1xx replies (100 Continue) are skipped. */
function parseReply(received: Buffer): Parsed | undefined {
  let rest = received;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) return undefined;
    const [statusLine, ...headerLines] = rest.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1];
    if (status === undefined) return undefined;
    const headers = new Map<string, string>();
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    rest = rest.subarray(headEnd + 4);
    if (Number(status) < 200) continue;
    if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
      const { body, whole } = unchunk(rest);
      return { status: Number(status), headers, body, whole };
    }
    const length = headers.get('content-length');
    if (length === undefined) return { status: Number(status), headers, body: rest, whole: false };
    return {
      status: Number(status),
      headers,
      body: rest.subarray(0, Number(length)),
      whole: rest.length >= Number(length),
    };
  }
}

/** The data of a chunked body as far as it has come, and whether its last chunk has. */
function unchunk(encoded: Buffer): { body: Buffer; whole: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < encoded.length) {
    const lineEnd = encoded.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(encoded.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) break;
    if (size === 0) return { body: Buffer.concat(parts), whole: true };
    if (encoded.length < lineEnd + 2 + size) break;
    parts.push(encoded.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return { body: Buffer.concat(parts), whole: false };
}
