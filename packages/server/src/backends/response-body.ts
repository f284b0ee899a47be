/** What both remote backends (openai-compatible, messages-upstream) read of a response's headers. */
import type { IncomingHttpHeaders } from 'node:http';

export function headerValue(response: { headers: IncomingHttpHeaders }, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
