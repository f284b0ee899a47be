/**
 * Ends a JSON reply under the write deadline (http/write-deadline.ts). A body the socket takes
 * at once, as nearly every reply is, costs nothing more than `end`. A larger one goes out in
 * pieces, each written once the one before it drained, so that a slow client that keeps
 * reading is not cut off in the middle of a long reply, while one that reads nothing is.
 */
import type { ServerResponse } from 'node:http';
import { PIECE_BYTES, WriteDeadline } from './write-deadline.js';

export function endJsonBody(
  response: ServerResponse,
  requestId: string,
  text: string,
  writeTimeoutMs: number,
  onCut: (requestId: string) => void,
): void {
  // A character is at most 3 bytes in UTF-8: a text this short is one piece. Not an async
  // function: that would make a promise for every reply, on the service's hottest path.
  if (text.length * 3 <= PIECE_BYTES) {
    response.end(text);
    if (response.writableLength > 0) new WriteDeadline(response, requestId, writeTimeoutMs, onCut).watchUntilFinished();
    return;
  }
  void endInPieces(response, Buffer.from(text), new WriteDeadline(response, requestId, writeTimeoutMs, onCut));
}

async function endInPieces(response: ServerResponse, bytes: Buffer, deadline: WriteDeadline): Promise<void> {
  for (let offset = 0; offset < bytes.length; offset += PIECE_BYTES) {
    if (response.destroyed) return;
    if (!response.write(bytes.subarray(offset, offset + PIECE_BYTES))) await deadline.drained();
  }
  if (response.destroyed) return;
  response.end();
  deadline.watchUntilFinished();
}
