/**
 * JSON text read for its structure as it comes, a character at a time: which brackets are open
 * and whether a string is. Not a validator: it tells where a value, or an object's member, ends,
 * so that a call's input can be cut into its members (input-members.ts), the envelope's input
 * found (tool-envelope-reader.ts), two inputs an engine ran together split (issue 35), and a call
 * left in text found in it (openai-compatible/leaked-calls/).
 */

/** What one character was, structurally. */
export type JsonMark = 'open' | 'close' | 'comma' | 'string' | 'space' | 'other';

export class JsonScanner {
  /** Brackets open. */
  depth = 0;
  /** Inside a string (its closing quote not read yet). */
  inString = false;
  private escaped = false;

  read(character: string): JsonMark {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (character === '\\') this.escaped = true;
      else if (character === '"') {
        this.inString = false;
        return 'string';
      }
      return 'other';
    }
    switch (character) {
      case '"':
        this.inString = true;
        return 'other';
      case '{':
      case '[':
        this.depth += 1;
        return 'open';
      case '}':
      case ']':
        this.depth -= 1;
        return 'close';
      case ',':
        return 'comma';
      default:
        return /\s/.test(character) ? 'space' : 'other';
    }
  }
}

/**
 * Where the JSON value that starts at `from` in `text` (after any whitespace) ends, exclusive;
 * undefined when it runs past the end of `text`. A scalar ends before the first character that
 * cannot be part of it.
 */
export function jsonValueEnd(text: string, from = 0): number | undefined {
  let start = from;
  while (start < text.length && /\s/.test(text[start]!)) start += 1;
  if (start >= text.length) return undefined;
  const scanner = new JsonScanner();
  const structured = text[start] === '{' || text[start] === '[' || text[start] === '"';
  for (let at = start; at < text.length; at += 1) {
    const mark = scanner.read(text[at]!);
    if (structured) {
      if (scanner.depth === 0 && !scanner.inString && (mark === 'close' || mark === 'string')) return at + 1;
    } else if (mark !== 'other') return at;
  }
  return structured ? undefined : text.length;
}

/** The JSON values written one after another in `text` (whitespace between), or undefined when it holds anything else. */
export function consecutiveJsonValues(text: string): unknown[] | undefined {
  const values: unknown[] = [];
  let at = 0;
  while (text.slice(at).trim() !== '') {
    const end = jsonValueEnd(text, at);
    if (end === undefined) return undefined;
    try {
      values.push(JSON.parse(text.slice(at, end)) as unknown);
    } catch {
      return undefined;
    }
    at = end;
  }
  return values;
}
