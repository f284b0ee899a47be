/**
 * How many of a step's output tokens the model may spend thinking, for the engines whose
 * thinking this service bounds itself (embedded llama.cpp, scripted). The backend's
 * `thinkingShare` of the budget is the share at `output_config.effort: "high"`, the public API's
 * default effort; the other levels scale it, and `budget_tokens` of thinking `enabled` is the
 * caller's own cap. So an answer always has room, and effort means the same on every such engine.
 */
import type { Effort } from '@model-messages/protocol';
import type { ModelCall } from './model-call.js';

/** Each effort level's share of the output budget, as a multiple of the `high` share. */
const EFFORT_SCALE: Record<Effort, number> = { low: 0.25, medium: 0.5, high: 1, xhigh: 1.5, max: 1.8 };

/** The largest share any effort may take: an answer keeps a tenth of the budget. */
const LARGEST_SHARE = 0.9;

/** Whether the model thinks at all is the caller's to decide (`call.thinking.on`); this is how much. */
export function thinkingBudget(call: Pick<ModelCall, 'thinking' | 'outputBudget'>, highShare: number): number {
  const thinking = call.thinking;
  const scale = EFFORT_SCALE[thinking.effort ?? 'high'];
  const share = Math.min(highShare * scale, Math.max(highShare, LARGEST_SHARE));
  const byEffort = Math.floor(call.outputBudget * share);
  return thinking.budgetTokens === undefined ? byEffort : Math.min(thinking.budgetTokens, byEffort);
}
