/**
 * The `anthropic-version` values the service answers (docs/decisions/0004). Both get the same
 * replies: the official client's reply types for 2026-10-21 (`@anthropic-ai/sdk` 1.x) are those
 * for 2023-06-01 (0.137), field for field; `test/conformance/reply-types.ts` fails to compile when
 * a client bump changes that, and the request's version is on its route context for the reply to
 * differ by then.
 */
export const API_VERSIONS = [
  /** The contract's version; the official client sends it up to 0.137.0. */
  '2023-06-01',
  /** The official client's default from 1.0.0. */
  '2026-10-21',
] as const;

export type ApiVersion = (typeof API_VERSIONS)[number];

export function isApiVersion(value: unknown): value is ApiVersion {
  return API_VERSIONS.includes(value as ApiVersion);
}
