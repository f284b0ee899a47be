/**
 * The reason phrase of a status line. node:http knows none for 529, the public API's overloaded
 * status, and writes `529 unknown`; the original writes `529 Overloaded`, and a client or proxy
 * that shows the status line shows that (issue 32).
 */
import { STATUS_CODES } from 'node:http';

const OWN_PHRASES: Readonly<Record<number, string>> = { 529: 'Overloaded' };

export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? OWN_PHRASES[status] ?? 'Unknown';
}
