import { randomBytes } from 'node:crypto';

/**
 * Ids unique across replicas and restarts without a random draw per request: a random prefix
 * per process, then a counter. Ids identify; they are not secrets.
 */
const processPrefix = randomBytes(9).toString('base64url');
let counter = 0;

export function uniqueId(kind: string): string {
  counter += 1;
  return `${kind}${processPrefix}${counter.toString(36).padStart(6, '0')}`;
}
