/**
 * The baseline for bench/messages-throughput.ts: a bare node:http server doing the least a
 * JSON API must do (read the body, JSON.parse it, answer JSON). It answers a reply captured
 * from mms, so both servers put the same bytes on the wire. Runs as a child process; gets
 * its reply over IPC, answers with its port, and shuts down when the channel closes.
 *
 *   bare-server.ts [extra work, µs]
 *
 * With extra work (the benchmark's --calibrate), each request also busy-waits that many
 * microseconds after parsing: a stand-in for whatever a real service does per request, which
 * shows what N µs of work costs in requests per second on the machine of the run.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { serveToParent } from './child-server.js';
import { readBody } from './read-body.js';

export interface CannedReply {
  body: string;
  contentType: string;
}

function isCannedReply(value: unknown): value is CannedReply {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.body === 'string' && typeof candidate.contentType === 'string';
}

function answer(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

const extraWorkNanoseconds = nanosecondsOf(process.argv[2] ?? '0');

function nanosecondsOf(microseconds: string): bigint {
  const value = Number(microseconds);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(
      `bare-server: the extra work must be a number of microseconds, got ${JSON.stringify(microseconds)}`,
    );
  return BigInt(Math.round(value * 1000));
}

/** Spins on the clock: a known amount of time, where a real computation's would vary by machine. */
function busyWait(nanoseconds: bigint): void {
  const until = process.hrtime.bigint() + nanoseconds;
  while (process.hrtime.bigint() < until);
}

async function handle(request: IncomingMessage, response: ServerResponse, reply: CannedReply): Promise<void> {
  try {
    // Parsed and looked at, so that the baseline pays for the JSON work mms cannot skip.
    const parsed: unknown = JSON.parse(await readBody(request));
    if (extraWorkNanoseconds > 0n) busyWait(extraWorkNanoseconds);
    if (typeof parsed !== 'object' || parsed === null || !('messages' in parsed)) {
      answer(response, 400, 'application/json', '{"type":"error"}');
      return;
    }
    answer(response, 200, reply.contentType, reply.body);
  } catch {
    answer(response, 400, 'application/json', '{"type":"error"}');
  }
}

if (process.send === undefined) {
  throw new Error('bench/bare-server.ts is started by bench/messages-throughput.ts (it needs an IPC channel)');
}
process.once('message', (message: unknown) => {
  if (!isCannedReply(message)) throw new Error('bare-server: expected { body, contentType } as the first message');
  const reply = message;
  serveToParent(
    'bench/bare-server.ts',
    createServer((request, response) => void handle(request, response, reply)),
  );
});
