/**
 * The scripted backend's tokenizer: a word, or one punctuation mark, with its leading spaces;
 * a word and a run of spaces are cut every LONGEST_RUN characters. Deterministic and lossless
 * (the tokens join back to the text), so usage counts, max_tokens truncation and count_tokens all
 * agree with each other, as they would on a real model.
 */
import type { ModelPrompt, Turn } from '../call/model-call.js';
import { promptTooLong } from '../prompt-too-long.js';

/**
 * Characters at most in a token's word, and in its leading spaces. A bound on a token's length
 * gives a bound on the count from a text's length alone (countPromptTokens), as a real
 * vocabulary's longest token does; unbounded, one word of 10 million letters was one token, and
 * a regular expression call over it overflowed the stack.
 */
export const LONGEST_RUN = 64;

/**
 * UTF-16 code units at most in one token: LONGEST_RUN spaces, then LONGEST_RUN characters of up
 * to two units each (a mark is one character).
 */
const LONGEST_TOKEN_UNITS = 3 * LONGEST_RUN;

/** The definition of a token. Sticky: it is asked only for the token that starts at a given place. */
const TOKEN_AT = /\s{0,64}[\p{L}\p{N}_]{1,64}|\s{0,64}[^\s\p{L}\p{N}_]|\s{1,64}/uy;

export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (let start = 0; start < text.length;) {
    const end = tokenEnd(text, start);
    tokens.push(text.slice(start, end));
    start = end;
  }
  return tokens;
}

export function countTokens(text: string): number {
  let count = 0;
  for (let start = 0; start < text.length; start = tokenEnd(text, start)) count += 1;
  return count;
}

/** Characters counted between two turns of the event loop: about a millisecond of work. */
const SLICE_CHARACTERS = 256 * 1024;

/**
 * A prompt's tokens, refused as too long (prompt-too-long.ts) without counting when its length
 * alone shows it cannot fit in `maximum`, and as soon as the count passes it. Counted in slices,
 * with a turn of the event loop between them: a 31 MB prompt took a second in one piece, and
 * every other request waited for it.
 */
export async function countPromptTokens(text: string, maximum: number): Promise<number> {
  const atLeast = Math.ceil(text.length / LONGEST_TOKEN_UNITS);
  if (atLeast > maximum) throw promptTooLong(atLeast, maximum, 'at least');
  let count = 0;
  for (let start = 0; start < text.length;) {
    const sliceEnd = start + SLICE_CHARACTERS;
    for (; start < text.length && start < sliceEnd; start = tokenEnd(text, start)) count += 1;
    if (start === text.length) break;
    if (count > maximum) throw promptTooLong(count, maximum, 'at least');
    await new Promise((resume) => setImmediate(resume));
  }
  if (count > maximum) throw promptTooLong(count, maximum, 'exact');
  return count;
}

/** The text of the first `count` tokens (all of it when it has fewer): a reply cut at a budget. */
export function tokenPrefix(text: string, count: number): string {
  let end = 0;
  for (let taken = 0; taken < count && end < text.length; taken += 1) end = tokenEnd(text, end);
  return text.slice(0, end);
}

/**
 * Where the token that starts at `start` ends. Every place in a text starts a token (a space
 * run ends in a word, a mark, or the text's end), so tokens follow each other with no gap.
 *
 * Why not the pattern alone: stepping a Unicode pattern through a text costs a regular
 * expression call per token, the largest single cost of a scripted reply. ASCII text is read
 * here a character at a time with the pattern's own rules; the pattern decides every token
 * that meets a character outside ASCII (a Unicode space, letter or digit may be one).
 */
function tokenEnd(text: string, start: number): number {
  let at = start;
  let code = text.charCodeAt(at);
  while (isAsciiSpace(code) && at - start < LONGEST_RUN) code = text.charCodeAt((at += 1));
  // Spaces up to the end of the text, or more of them than one token holds, are a token of their own.
  if (at === text.length || (isAsciiSpace(code) && at - start === LONGEST_RUN)) return at;
  if (code >= 128) return patternTokenEnd(text, start);
  // One mark, such as `.` or `{`, with the spaces before it.
  if (!isAsciiWordCharacter(code)) return at + 1;
  const wordStart = at;
  do code = text.charCodeAt((at += 1));
  while (isAsciiWordCharacter(code) && at - wordStart < LONGEST_RUN);
  if (at - wordStart === LONGEST_RUN) return at;
  // A letter outside ASCII may carry the word on (`naïve`). charCodeAt past the end is NaN.
  return code >= 128 ? patternTokenEnd(text, start) : at;
}

function patternTokenEnd(text: string, start: number): number {
  TOKEN_AT.lastIndex = start;
  // Cannot fail (see tokenEnd); were it to, the callers would loop on the same place forever.
  if (!TOKEN_AT.test(text)) throw new Error(`the scripted tokenizer found no token at ${start}`);
  return TOKEN_AT.lastIndex;
}

/** `\s` within ASCII: tab, line feed, vertical tab, form feed, carriage return, space. */
function isAsciiSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}

/** `[\p{L}\p{N}_]` within ASCII. */
function isAsciiWordCharacter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95;
}

/** A ChatML-like rendering of the whole prompt; its token count is the request's input tokens. */
export function renderPrompt(prompt: ModelPrompt): string {
  const parts: string[] = [];
  if (prompt.system.length > 0) parts.push(`<system>\n${prompt.system.map((part) => part.text).join('\n')}`);
  for (const tool of prompt.tools) {
    parts.push(
      `<tool>\n${JSON.stringify({ name: tool.name, description: tool.description, input_schema: tool.inputSchema })}`,
    );
  }
  for (const turn of prompt.turns) parts.push(`<${turn.role}>\n${turn.parts.map(renderPart).join('\n')}`);
  return parts.join('\n');
}

function renderPart(part: Turn['parts'][number]): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'thinking':
      return part.text;
    case 'redacted-thinking':
      return part.data;
    case 'tool-call':
      return `call ${part.name} ${JSON.stringify(part.input)}`;
    case 'tool-result':
      return `result ${part.content.map(renderPart).join('\n')}`;
    case 'image':
      return `image ${JSON.stringify(part.source)}`;
    case 'document':
      return `document ${part.source.kind === 'text' ? part.source.text : JSON.stringify(part.source)}`;
    default:
      return part satisfies never;
  }
}
