/**
 * The request body as JSON: JSON content only (spec: Authentication, content-type), at most
 * 32 MB (413 past it), within what is left of the service's budget of body bytes in flight (529
 * past it, body-memory-budget.ts), parsed as json-text.ts says; a body over `PARSE_ON_LOOP_BYTES`
 * is scanned and parsed in a worker (json-body-parser.ts).
 */
import type { IncomingMessage } from 'node:http';
import { MAX_REQUEST_BYTES, ServiceError } from '@model-messages/protocol';
import type { BodyMemoryHold } from './body-memory-budget.js';
import { jsonBodyParser } from './json-body-parser.js';
import { parseJsonText } from './json-text.js';
import { lingerAfterLastReply } from './lingering-close.js';

/**
 * Up to here a body is parsed on the event loop: the costliest 512 KB (a quarter of a million
 * tiny values) parses in about 10 ms, against the millisecond or two a round trip to a worker
 * adds; the bounds' walk (json-bounds.ts) then refuses what is past them.
 */
export const PARSE_ON_LOOP_BYTES = 512 * 1024;

/**
 * The parsed body; undefined when the request has none (a POST with no body is the route's to
 * refuse). Its bytes are taken from the app's budget into `bodyMemory`, which holds them until the
 * request ends (app.ts gives them back).
 */
export function readJsonBody(request: IncomingMessage, bodyMemory: BodyMemoryHold): Promise<unknown> {
  const headers = request.headers;
  const declaredLength = headers['content-length'];
  const chunked = headers['transfer-encoding'] !== undefined;
  if (!chunked && (declaredLength === undefined || declaredLength === '0')) return Promise.resolve(undefined);
  if (!isJsonMediaType(headers['content-type']))
    return Promise.reject(new ServiceError('invalid_request', 'content-type: must be application/json'));
  // A declared length over the limit, or over what is left of the budget, is refused before a
  // byte of the body is read; one that fits takes all of it now (body-memory-budget.ts).
  if (!chunked) {
    const length = Number(declaredLength);
    if (length > MAX_REQUEST_BYTES) return Promise.reject(tooLarge());
    if (!bodyMemory.take(length)) return Promise.reject(budgetRefusal(request, bodyMemory));
  }
  return new Promise((resolve, reject) => {
    // Inline arrows, not named ones: tsx names a named function each time it is created, at a
    // cost on every request. Nothing is detached: after the first outcome the rest are no-ops.
    const body = new BodyCollector(resolve, reject, chunked ? request : undefined, bodyMemory);
    request.on('data', (chunk: Buffer) => body.add(chunk));
    request.on('end', () => body.end());
    request.on('error', (error: Error) => body.failedToRead(error));
    // Every request closes, after its end too: only a close before the end is a failure.
    request.on('close', () => body.closed());
  });
}

function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/json';
}

/**
 * The budget's 529 (body-memory-budget.ts). Its reply closes the connection, which then reads no
 * further and lingers for the client, still sending, to read the reply (lingering-close.ts).
 */
function budgetRefusal(request: IncomingMessage, bodyMemory: BodyMemoryHold): ServiceError {
  lingerAfterLastReply(request.socket);
  return bodyMemory.refusal();
}

function tooLarge(): ServiceError {
  return new ServiceError('request_too_large', 'Request exceeds the maximum allowed number of bytes (32 MB).');
}

/**
 * The body's chunks until its end. A body past the limit is answered at once; the rest of it is
 * read and dropped by node:http once the reply has gone out. A chunked body takes each chunk from
 * the budget as it comes; one past what is left is answered 529, and is not read further: its
 * connection closes after the reply.
 */
class BodyCollector {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private settled = false;

  constructor(
    private readonly resolve: (value: unknown) => void,
    private readonly reject: (error: unknown) => void,
    /** A chunked body's request: its chunks take from the budget as they come. */
    private readonly chunkedRequest: IncomingMessage | undefined,
    private readonly bodyMemory: BodyMemoryHold,
  ) {}

  add(chunk: Buffer): void {
    if (this.settled) return;
    this.bytes += chunk.length;
    if (this.bytes > MAX_REQUEST_BYTES) {
      this.fail(tooLarge());
      return;
    }
    if (this.chunkedRequest !== undefined && !this.bodyMemory.take(chunk.length)) {
      this.chunkedRequest.pause();
      this.fail(budgetRefusal(this.chunkedRequest, this.bodyMemory));
      return;
    }
    this.chunks.push(chunk);
  }

  end(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.bytes > PARSE_ON_LOOP_BYTES) {
      // The chunks' memory moves to the worker as it is, and the worker joins them: a copy here
      // writes as many fresh pages as the body has bytes, and on a virtual machine that faults
      // pages in lazily that took 4 to 5 ms per MB on the event loop (90 ms for 20 MB).
      const pieces = this.chunks.map(ownBuffer);
      this.chunks = [];
      jsonBodyParser.parse(pieces).then(this.resolve, this.reject);
      return;
    }
    const text =
      this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
    try {
      this.resolve(parseJsonText(text));
    } catch (error) {
      this.reject(error);
    }
  }

  failedToRead(error: Error): void {
    if (!this.settled)
      this.fail(new ServiceError('invalid_request', `the request body could not be read: ${error.message}`));
  }

  /** The client went away before the body's end: nobody is left to answer, but the route must not wait. */
  closed(): void {
    if (!this.settled)
      this.fail(
        new ServiceError('invalid_request', 'the client closed the connection before the request body was complete'),
      );
  }

  /** Only while unsettled: every caller checks first. */
  private fail(error: ServiceError): void {
    this.settled = true;
    this.chunks = [];
    this.reject(error);
  }
}

/** The chunk's memory as an ArrayBuffer of its own: its own when it has one (a socket's reads do), else a copy. */
function ownBuffer(chunk: Buffer): ArrayBuffer {
  const buffer = chunk.buffer;
  if (buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength) return buffer;
  return Uint8Array.prototype.slice.call(chunk).buffer as ArrayBuffer;
}
