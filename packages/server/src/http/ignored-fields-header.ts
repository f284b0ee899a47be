/**
 * `mms-ignored-fields`: the fields a request carried that this service does not know and, with
 * the config's `unknownFields: "ignore"`, dropped rather than refused (protocol's parse-request.ts).
 * Named in the reply so that nothing is lost silently. Field names are the client's JSON keys:
 * any character outside printable ASCII, the comma that separates them and the percent sign
 * itself (so that an encoded name reads one way) are percent-encoded,
 * since node:http refuses such a header value outright.
 */
export const IGNORED_FIELDS_HEADER = 'mms-ignored-fields';

/** Names past this many are counted, not listed: a header has a size limit at every proxy. */
const MOST_NAMED = 20;

export function ignoredFieldsHeader(fields: readonly string[]): Record<string, string> {
  if (fields.length === 0) return {};
  const named = fields.slice(0, MOST_NAMED).map(headerSafe);
  if (fields.length > MOST_NAMED) named.push(`(and ${fields.length - MOST_NAMED} more)`);
  return { [IGNORED_FIELDS_HEADER]: named.join(', ') };
}

function headerSafe(name: string): string {
  return name.replace(/[^\x20-\x24\x26-\x2b\x2d-\x7e]/gu, (character) =>
    encodeURIComponent(character).replace(',', '%2C'),
  );
}
