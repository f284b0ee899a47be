/**
 * Research pass 1's request (spec: Endpoints, "Research pass 1 shape"): the large tier,
 * `thinking: adaptive` (on another tier, what thinking-policy.ts gives prose), web search (`max_uses` 5, `allowed_callers: ["direct"]`, which keeps the
 * request out of programmatic tool calling: rule 3), code execution, and optionally web fetch
 * with `max_content_tokens` from the input headroom divided across its uses (spec: Limits).
 */
import { SERVER_TOOL_NAMES, SERVER_TOOL_TYPES, type MessageRequest, type ToolParam } from '@model-messages/protocol';
import { fetchContentTokens } from '../budgets.js';
import type { ResolvedModel } from '../client-options.js';
import { PreSendError } from '../errors.js';
import { promptChars } from '../pre-send-checks.js';
import { researchSystem, researchTurn } from '../prompts.js';
import { proseThinking, withThinkingPolicy } from '../thinking-policy.js';

export const RESEARCH_SEARCH_USES = 5;
export const RESEARCH_FETCH_USES = 5;

export interface ResearchShape {
  model: ResolvedModel;
  question: string;
  context: unknown;
  instructions: string | undefined;
  maxTokens: number;
  webSearchMaxUses: number;
  /** Uses of web fetch; undefined leaves web fetch out. */
  webFetchMaxUses: number | undefined;
  bufferTokens: number;
  /** The Client's thinkingDisabledModels. */
  thinkingDisabled: ReadonlySet<string>;
}

export function buildResearchRequest(shape: ResearchShape): MessageRequest {
  const tools: ToolParam[] = [
    {
      type: SERVER_TOOL_TYPES.webSearch,
      name: SERVER_TOOL_NAMES.webSearch,
      max_uses: shape.webSearchMaxUses,
      allowed_callers: ['direct'],
    },
    { type: SERVER_TOOL_TYPES.codeExecution, name: SERVER_TOOL_NAMES.codeExecution },
  ];
  const thinking = proseThinking(shape.model);
  const request = withThinkingPolicy(
    {
      model: shape.model.id,
      max_tokens: shape.maxTokens,
      system: researchSystem(shape.instructions),
      messages: [{ role: 'user', content: researchTurn(shape.question, shape.context) }],
      tools,
      ...(thinking ? { thinking } : {}),
    },
    shape.model,
    shape.thinkingDisabled,
  );
  if (shape.webFetchMaxUses === undefined) return request;
  const maxContentTokens = fetchContentTokens({
    contextWindow: shape.model.keptWindow,
    maxOutputTokens: shape.maxTokens,
    bufferTokens: shape.bufferTokens,
    promptChars: promptChars(request),
    maxUses: shape.webFetchMaxUses,
  });
  if (maxContentTokens < 1) {
    throw new PreSendError(
      'prompt_too_long',
      `web fetch: the prompt leaves no input headroom for ${shape.webFetchMaxUses} fetches on ${shape.model.id} (window ${shape.model.keptWindow}, max_tokens ${shape.maxTokens}, buffer ${shape.bufferTokens}) (refused by the client before sending)`,
    );
  }
  const webFetch: ToolParam = {
    type: SERVER_TOOL_TYPES.webFetch,
    name: SERVER_TOOL_NAMES.webFetch,
    max_uses: shape.webFetchMaxUses,
    max_content_tokens: maxContentTokens,
    allowed_callers: ['direct'],
  };
  return { ...request, tools: [...tools, webFetch] };
}
