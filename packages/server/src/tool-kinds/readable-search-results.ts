/**
 * Which `web_search_result` objects this service can vouch for, and their text (issue 33: kept
 * here, on the low floor, since the model reads it through the web search descriptor and the
 * context budget counts it). A result is readable when the search tool made it, or when it came
 * back in a request with content that verified (signing/search-content.ts); any other result has
 * no readable text. Held weakly, by the result object, so the texts go with the request or turn
 * they belong to.
 */
const readable = new WeakMap<object, string>();

/** Makes `result`'s text readable: one the search tool just made, or one whose content verified. */
export function markReadable(result: object, text: string): void {
  readable.set(result, text);
}

/** A `web_search_result`'s text as a model reads it; undefined when this service cannot vouch for it. */
export function readableText(result: object): string | undefined {
  return readable.get(result);
}
