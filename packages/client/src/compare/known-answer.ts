/**
 * Matching an answer against a known answer (tier move check): every field the known answer
 * gives must be in the answer with the same value; fields it leaves out are free. Strings
 * compare trimmed and case-insensitively; arrays need each known item somewhere in the answer.
 */

export function matchesKnownAnswer(answer: unknown, known: unknown): boolean {
  if (typeof known === 'string')
    return typeof answer === 'string' && answer.trim().toLowerCase() === known.trim().toLowerCase();
  if (Array.isArray(known))
    return (
      Array.isArray(answer) && known.every((item) => answer.some((candidate) => matchesKnownAnswer(candidate, item)))
    );
  if (known !== null && typeof known === 'object') {
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return false;
    return Object.entries(known).every(
      ([key, value]) =>
        Object.hasOwn(answer, key) && matchesKnownAnswer((answer as Record<string, unknown>)[key], value),
    );
  }
  return Object.is(answer, known);
}

/** JSON with object keys sorted, so that two answers compare by content. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
