/**
 * Request fields the official clients may send (SDK 1.x `MessageCreateParams`, its beta params)
 * that this service decided not to accept: each is a 400 that says why, whatever the config's
 * `unknownFields`, since ignoring them would change the answer without a word. Fields accepted
 * and ignored, and those implemented, are in request-schema.ts; docs/compatibility.md has the
 * table and the reasons at length.
 */
export const UNSUPPORTED_FIELDS: Readonly<Record<string, string>> = {
  container:
    'containers are not kept between requests by this service: code execution runs each program in a fresh sandbox',
  mcp_servers: 'this service does not connect to MCP servers; give their tools as custom tools',
  compaction: 'this service does not compact conversations; send the conversation as it is',
  thread: 'this service keeps no threads; send the whole conversation in messages',
  fallbacks: 'this service does not choose fallback models per request; configure backends lists instead',
  fallback_credit_token: 'this service does not choose fallback models per request',
  billing_policy: 'this service has no billing',
  output_format: 'use output_config.format, which replaced it',
};

/** The first top-level field of `body` that is refused on purpose, with why; undefined when none. */
export function unsupportedField(body: object): string | undefined {
  for (const field in UNSUPPORTED_FIELDS)
    if (Object.hasOwn(body, field)) return `${field}: not supported: ${UNSUPPORTED_FIELDS[field]}`;
  return undefined;
}
