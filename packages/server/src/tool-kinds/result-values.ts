/**
 * Reading a result block's content, which a client may have sent back in any shape the request
 * schema lets through (JSON objects): a field that is not the type it should be reads as empty.
 */

/** A string field's value; '' for anything else. */
export function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** An error result's content: `{type: "<block type>_error", error_code}`. */
export function isErrorContent(content: unknown): boolean {
  return (
    typeof content === 'object' && content !== null && String((content as { type?: unknown }).type).endsWith('_error')
  );
}

/** An error content's `error_code`, as the model reads it after `failed: `. */
export function errorCodeText(content: unknown): string {
  return textOf((content as { error_code?: unknown } | null)?.error_code) || 'unknown error';
}

/** What a content the tool does not measure (an error's) puts in the context: its JSON. */
export function jsonCharacters(content: unknown): number {
  return JSON.stringify(content).length;
}
