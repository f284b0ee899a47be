/** What both remote backends (openai-compatible, messages-upstream) do with an undici response. */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

export function headerValue(response: { headers: IncomingHttpHeaders }, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * What may follow the end of an answer (`[DONE]`, message_stop) before the server closes: more
 * than this, or a longer wait, and the body is dropped. Nothing waits on it (the answer went on
 * already); the limits only bound what a lingering or chattering server costs a connection.
 */
const DRAIN_LIMIT_MS = 1_000;
const DRAIN_LIMIT_LENGTH = 64 * 1024;

/**
 * Reads what is left of a body whose answer is complete (servers send nothing more and close at
 * once), so that it ends normally and its connection goes back to the pool, then lets it go.
 * Runs in the background: it owns `body` from here on, and never rejects. `chunks` is the body's
 * iterator, already started (bytes or decoded text: only their length is counted).
 */
export function drainInBackground(
  chunks: AsyncIterator<{ length: number }>,
  body: Dispatcher.ResponseData['body'],
): void {
  const timer = setTimeout(() => body.destroy(), DRAIN_LIMIT_MS);
  void (async () => {
    let read = 0;
    try {
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
        read += next.value.length;
        if (read > DRAIN_LIMIT_LENGTH) return;
      }
    } catch {
      // The answer is complete already: a failure now (the limit above, the caller leaving)
      // changes nothing.
    } finally {
      clearTimeout(timer);
      body.destroy();
    }
  })();
}
