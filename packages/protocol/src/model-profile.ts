/**
 * What the endpoint rules need to know of a model: its tier and generation (spec: Versioning)
 * and its limits. The server's registry and the client's configuration both produce these.
 */
import type { ConversationRequest } from './request-schema.js';

export type ModelTier = 'small' | 'mid' | 'large';
export type ModelGeneration = 'older' | 'newer';

/** What a max_tokens above the model's maxOutputTokens gets: refused (a 400), or lowered to it. */
export type MaxTokensPolicy = 'refuse' | 'clamp';

export interface ModelProfile {
  id: string;
  tier: ModelTier;
  generation: ModelGeneration;
  contextWindow: number;
  maxOutputTokens: number;
  /**
   * Unset is `refuse`, as the contract has it. Only the service's operator sets `clamp`, for
   * clients that ask for more than the model gives; a calling client never assumes it.
   */
  maxTokens?: MaxTokensPolicy;
}

/**
 * Whether the model thinks on this request (spec: thinking, Versioning).
 * - An explicit `adaptive` or `enabled` thinks; `disabled` does not.
 * - Unset: only the newer small tier thinks, and only on a request that offers a tool. A forced
 *   tool_choice turns that default off, because thinking with a forced tool is refused when
 *   asked for explicitly (rule 2) and a default must not produce what a request may not ask for.
 */
export function requestThinks(request: ConversationRequest, model: ModelProfile): boolean {
  const thinking = request.thinking;
  if (thinking) return thinking.type !== 'disabled';
  const offersTool = (request.tools?.length ?? 0) > 0;
  const forced = request.tool_choice?.type === 'tool' || request.tool_choice?.type === 'any';
  return model.tier === 'small' && model.generation === 'newer' && offersTool && !forced;
}
