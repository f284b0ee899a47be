/**
 * The body of a JSON parse worker (json-body-parser.ts): a request body's pieces in, its value or
 * its refusal out, one body at a time. The bounds are checked on the text first
 * (assertJsonTextBounds), so a body past them is refused without being parsed. Says `ready` once
 * its modules are loaded.
 */
import { parentPort } from 'node:worker_threads';
import { assertJsonTextBounds, ServiceError, type ErrorCode } from '@model-messages/protocol';
import { parseJsonText } from './json-text.js';

export type ParseReply =
  { type: 'ready' } | { type: 'parsed'; value: unknown } | { type: 'refused'; code: ErrorCode; message: string };

const port = parentPort!;
port.on('message', (pieces: ArrayBuffer[]) => {
  let reply: ParseReply;
  try {
    // Joined here, not on the event loop: see request-body.ts.
    const body = Buffer.concat(pieces.map((piece) => Buffer.from(piece)));
    assertJsonTextBounds(body);
    reply = { type: 'parsed', value: parseJsonText(body.toString('utf8')) };
  } catch (error) {
    reply =
      error instanceof ServiceError
        ? { type: 'refused', code: error.code, message: error.message }
        : { type: 'refused', code: 'internal', message: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
port.postMessage({ type: 'ready' } satisfies ParseReply);
