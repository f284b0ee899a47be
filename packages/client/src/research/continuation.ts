/**
 * The request that resumes a paused research turn (decision 0006): the turn so far goes back as
 * the final assistant message, as the public API does. The service counts `max_uses` per request
 * (decision 0006: "set per request"), so a continuation that repeated pass 1's tools would grant
 * a fresh 5 searches and 5 fetches each time; instead it offers only the uses the turn has left,
 * and web fetch's `max_content_tokens` is recomputed from the headroom the resumed prompt leaves
 * (spec, Limits: "divide the input headroom after the prompt across the allowed fetches"), so
 * fetched content stays within the headroom however often the turn pauses.
 */
import {
  isPausedTurn,
  SERVER_TOOL_NAMES,
  SERVER_TOOL_TYPES,
  type ContentBlock,
  type ContentBlockParam,
  type MessageParam,
  type MessageRequest,
  type ToolParam,
  type Usage,
} from '@model-messages/protocol';
import { fetchContentTokens } from '../budgets.js';
import type { ResolvedModel } from '../client-options.js';
import { promptChars } from '../pre-send-checks.js';

export interface ToolUsesSpent {
  webSearch: number;
  webFetch: number;
}

/**
 * What the paused replies spent: the calls in the turn (each taken to count against
 * `max_uses`, errors included; the service does not count a call it refused before any request,
 * so this may over-count, which only offers fewer uses) or the requests the service reported,
 * whichever is more (a call from code in the sandbox is in the usage but not in the turn).
 */
export function usesSpent(turn: readonly ContentBlock[], usages: readonly Usage[]): ToolUsesSpent {
  const calls = (name: string) =>
    turn.filter((block) => block.type === 'server_tool_use' && block.name === name).length;
  const reported = (field: 'web_search_requests' | 'web_fetch_requests') =>
    usages.reduce((sum, usage) => sum + (usage.server_tool_use?.[field] ?? 0), 0);
  return {
    webSearch: Math.max(calls(SERVER_TOOL_NAMES.webSearch), reported('web_search_requests')),
    webFetch: Math.max(calls(SERVER_TOOL_NAMES.webFetch), reported('web_fetch_requests')),
  };
}

export interface ContinuationBudget {
  model: ResolvedModel;
  bufferTokens: number;
}

export type Continuation = { ok: true; request: MessageRequest; tools: string } | { ok: false; why: string };

export function continuation(
  original: MessageRequest,
  turn: readonly ContentBlock[],
  maxTokens: number,
  spent: ToolUsesSpent,
  budget: ContinuationBudget,
): Continuation {
  const paused: MessageParam = { role: 'assistant', content: turn as unknown as ContentBlockParam[] };
  if (!isPausedTurn(paused)) {
    const last = turn.at(-1)?.type ?? 'no';
    return {
      ok: false,
      why: `the paused turn ends on ${last === 'no' ? 'no' : `a ${last}`} block, not a server tool result; sent back it would be a prefill with tools (rule 4)`,
    };
  }
  const resumed: MessageRequest = {
    ...original,
    max_tokens: maxTokens,
    messages: [...original.messages, paused],
    tools: (original.tools ?? []).flatMap((tool) => remaining(tool, spent)),
  };
  const request = withFetchShare(resumed, budget);
  return { ok: true, request, tools: describeTools(request.tools ?? []) };
}

/**
 * `request` with web fetch's `max_content_tokens` recomputed for its own prompt and `max_tokens`:
 * the headroom left divided across the uses it offers (spec, Limits); web fetch is left out when
 * no headroom is left. For every request after pass 1's first: a continuation (a longer prompt)
 * and a truncation retry (a larger `max_tokens`), so that prompt + fetched content + output +
 * buffer stays within the window whatever changed.
 */
export function withFetchShare(request: MessageRequest, budget: ContinuationBudget): MessageRequest {
  const tools = request.tools ?? [];
  const fetch = tools.find((tool) => tool.type === SERVER_TOOL_TYPES.webFetch);
  if (fetch?.type !== SERVER_TOOL_TYPES.webFetch || fetch.max_uses === undefined) return request;
  const share = fetchContentTokens({
    contextWindow: budget.model.keptWindow,
    maxOutputTokens: request.max_tokens,
    bufferTokens: budget.bufferTokens,
    promptChars: promptChars(request),
    maxUses: fetch.max_uses,
  });
  return {
    ...request,
    tools: tools.flatMap((tool) =>
      tool !== fetch ? [tool] : share >= 1 ? [{ ...fetch, max_content_tokens: share }] : [],
    ),
  };
}

/** The tool with the uses the turn has left; none when it has spent them all (`max_uses` cannot be 0). */
function remaining(tool: ToolParam, spent: ToolUsesSpent): ToolParam[] {
  if (!('max_uses' in tool) || tool.max_uses === undefined) return [tool];
  const used =
    tool.name === SERVER_TOOL_NAMES.webSearch
      ? spent.webSearch
      : tool.name === SERVER_TOOL_NAMES.webFetch
        ? spent.webFetch
        : 0;
  const left = tool.max_uses - used;
  return left >= 1 ? [{ ...tool, max_uses: left }] : [];
}

function describeTools(tools: readonly ToolParam[]): string {
  return tools
    .map((tool) => {
      if (!('max_uses' in tool) || tool.max_uses === undefined) return tool.name;
      const content =
        'max_content_tokens' in tool && tool.max_content_tokens !== undefined
          ? `, ${tool.max_content_tokens} content tokens each`
          : '';
      return `${tool.name} ${tool.max_uses} left${content}`;
    })
    .join('; ');
}
