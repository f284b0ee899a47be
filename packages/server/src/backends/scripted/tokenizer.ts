/**
 * The scripted backend's tokenizer: a word, or one punctuation mark, with its leading spaces.
 * Deterministic and lossless (the tokens join back to the text), so usage counts, max_tokens
 * truncation and count_tokens all agree with each other, as they would on a real model.
 */
import type { ContentBlockParam, ConversationRequest } from '@mms/protocol';
import { webSearchResultText } from '../../tools/web-search/result-text.js';

/** The definition of a token. Sticky: it is asked only for the token that starts at a given place. */
const TOKEN_AT = /\s*[\p{L}\p{N}_]+|\s*[^\s\p{L}\p{N}_]|\s+$/uy;

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
  while (isAsciiSpace(code)) code = text.charCodeAt((at += 1));
  // Spaces up to the end of the text are a token of their own.
  if (at === text.length) return at;
  if (code >= 128) return patternTokenEnd(text, start);
  // One mark, such as `.` or `{`, with the spaces before it.
  if (!isAsciiWordCharacter(code)) return at + 1;
  do code = text.charCodeAt((at += 1));
  while (isAsciiWordCharacter(code));
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
export function renderPrompt(request: ConversationRequest): string {
  const parts: string[] = [];
  const system = request.system;
  if (system !== undefined) {
    parts.push(`<system>\n${typeof system === 'string' ? system : system.map((block) => block.text).join('\n')}`);
  }
  for (const tool of request.tools ?? []) parts.push(`<tool>\n${JSON.stringify(tool)}`);
  for (const message of request.messages) {
    const content = typeof message.content === 'string' ? message.content : message.content.map(renderBlock).join('\n');
    parts.push(`<${message.role}>\n${content}`);
  }
  return parts.join('\n');
}

function renderBlock(block: ContentBlockParam): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'thinking':
      return block.thinking;
    case 'redacted_thinking':
      return block.data;
    case 'tool_use':
    case 'server_tool_use':
      return `call ${block.name} ${JSON.stringify(block.input)}`;
    case 'tool_result':
      return `result ${typeof block.content === 'string' ? block.content : JSON.stringify(block.content ?? '')}`;
    case 'web_search_tool_result':
      // What a model reads of search results (their decoded text), not the base64 on the wire.
      return `${block.type} ${webSearchResultText(block.content)}`;
    case 'image':
    case 'document':
    case 'web_fetch_tool_result':
    case 'code_execution_tool_result':
      return `${block.type} ${JSON.stringify(block)}`;
    default:
      return block satisfies never;
  }
}
