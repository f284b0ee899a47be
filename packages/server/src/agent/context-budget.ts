/**
 * The input headroom of one turn, shared by the server tool results appended to it (spec,
 * Limits: "divide the input headroom after the prompt across the allowed fetches"; without it
 * "whole pages accumulate and exceed the context window").
 *
 * Headroom = context window - prompt tokens - max_tokens (every output token of the turn, its
 * server_tool_use blocks included, is already inside max_tokens), at 4 characters a token as in
 * the spec's prompt-size formula. Each result appended to the turn is subtracted as it comes,
 * so what is left is divided across the web search and web fetch calls still allowed: a call
 * that used less than its share leaves more for the next, and no sequence of calls, code
 * output included, can fill more than the headroom. A call whose share cannot hold the least it
 * returns (a page's truncation note, one search result) makes no request and answers
 * max_uses_exceeded (web-fetch-tool.ts, web-search-tool.ts). Results of calls made by code in
 * the sandbox reach only the code and are not subtracted.
 */
import {
  SERVER_TOOL_NAMES,
  SERVER_TOOL_TYPES,
  type MessageRequest,
  type ServerToolResultBlock,
} from '@model-messages/protocol';
import { readableText } from '../tools/web-search/encrypted-content.js';

export const CHARACTERS_PER_TOKEN = 4;

/**
 * Calls a web search or web fetch tool without `max_uses` is assumed to make, for dividing the
 * headroom: 5, the `max_uses` of both in the spec's research pass and web fetch shape, so an
 * unset limit gets the share a typical client's calls would. From the fifth such call on, each
 * call counts as the last one of its tool and may take what the earlier calls left.
 */
export const DEFAULT_BUDGETED_USES = 5;

interface BudgetedTool {
  name: string;
  maxUses: number | undefined;
}

export class ContextBudget {
  private remaining: number;
  private readonly tools: BudgetedTool[];

  constructor(request: MessageRequest, inputTokens: number, contextWindow: number) {
    this.remaining = Math.max(0, contextWindow - inputTokens - request.max_tokens) * CHARACTERS_PER_TOKEN;
    this.tools = [];
    for (const tool of request.tools ?? []) {
      if (tool.type === SERVER_TOOL_TYPES.webSearch)
        this.tools.push({ name: SERVER_TOOL_NAMES.webSearch, maxUses: tool.max_uses });
      if (tool.type === SERVER_TOOL_TYPES.webFetch)
        this.tools.push({ name: SERVER_TOOL_NAMES.webFetch, maxUses: tool.max_uses });
    }
  }

  /** Characters of headroom not yet taken by a result. */
  get remainingCharacters(): number {
    return this.remaining;
  }

  /**
   * Characters the result of a call to `toolName` may take, given the calls made so far
   * (`uses`, not counting this one). A fetch with `max_content_tokens` gets its share too, and
   * the tool holds its page text to the smaller of the two: a cap alone would let the first
   * fetches take all the headroom and leave none for the calls still allowed. Code execution
   * gets one share, as one more call would.
   */
  share(toolName: string, uses: ReadonlyMap<string, number>): number {
    const callsLeft = this.tools.reduce((sum, tool) => sum + callsLeftOf(tool, uses.get(tool.name) ?? 0), 0);
    const budgeted = this.tools.some((tool) => tool.name === toolName);
    return Math.floor(this.remaining / Math.max(1, budgeted ? callsLeft : callsLeft + 1));
  }

  /** Takes a result appended to the turn out of the headroom. */
  spend(block: ServerToolResultBlock): void {
    this.remaining = Math.max(0, this.remaining - resultCharacters(block));
  }
}

function callsLeftOf(tool: BudgetedTool, used: number): number {
  if (tool.maxUses !== undefined) return Math.max(0, tool.maxUses - used);
  return Math.max(1, DEFAULT_BUDGETED_USES - used);
}

/**
 * What a result puts in the model's context, in characters, as the tools fit it to a share:
 * a page's text, URL and title; each search result's URL, title, page age and text; code's
 * stdout and stderr. An error block counts its JSON (a few dozen characters).
 */
export function resultCharacters(block: ServerToolResultBlock): number {
  const content = block.content as Record<string, unknown> | Array<Record<string, unknown>>;
  if (Array.isArray(content)) return content.reduce((sum, result) => sum + searchResultCharacters(result), 0);
  if (content.type === 'web_fetch_result') {
    const document = content.content as { title?: unknown; source?: { data?: unknown } } | undefined;
    return length(content.url) + length(document?.title) + length(document?.source?.data);
  }
  if (content.type === 'code_execution_result') return length(content.stdout) + length(content.stderr);
  return JSON.stringify(content).length;
}

function searchResultCharacters(result: Record<string, unknown>): number {
  const text = readableText(result) ?? '';
  return length(result.url) + length(result.title) + length(result.page_age) + text.length;
}

function length(value: unknown): number {
  return typeof value === 'string' ? value.length : 0;
}
