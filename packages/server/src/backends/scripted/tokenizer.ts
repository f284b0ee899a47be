/**
 * The scripted backend's tokenizer: a word, or one punctuation mark, with its leading spaces.
 * Deterministic and lossless (the tokens join back to the text), so usage counts, max_tokens
 * truncation and count_tokens all agree with each other, as they would on a real model.
 */
import type { ContentBlockParam, ConversationRequest } from '@mms/protocol';
import { webSearchResultText } from '../../tools/web-search/result-text.js';

const TOKEN = /\s*[\p{L}\p{N}_]+|\s*[^\s\p{L}\p{N}_]|\s+$/gu;
/** The same pattern, stepped through with `test`: counting needs no array of tokens. */
const NEXT_TOKEN = new RegExp(TOKEN.source, TOKEN.flags);

export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export function countTokens(text: string): number {
  // Every alternative matches at least one character, so the loop always moves on.
  NEXT_TOKEN.lastIndex = 0;
  let count = 0;
  while (NEXT_TOKEN.test(text)) count += 1;
  return count;
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
