/**
 * `context_management.edits`, applied to the prompt before it reaches the engine (issue 34), in
 * the order the request lists them (clear_thinking first, as the endpoint rules require):
 *
 * - `clear_thinking_20251015` leaves out older turns' thinking (thinking-clearing.ts);
 * - `clear_tool_uses_20250919` clears the oldest tool results once the prompt reaches its trigger
 *   (default 100,000 input tokens, scaled to a smaller window; or a count of tool uses), and only
 *   when that clears at least `clear_at_least` tokens (tool-use-clearing.ts);
 * - `compact_20260112` is not applied here: once the prompt reaches its trigger, the turn asks the
 *   model for a summary first (agent/compaction-step.ts), so this says only that it will.
 *
 * The messages route and count_tokens both come here, so a count is the count of what the model
 * reads. The prompt is counted once when no edit changes it, as before; each edit that changes it
 * costs one more count, which is how `cleared_input_tokens` is known.
 */
import type {
  AppliedEdit,
  ClearToolUsesEditParam,
  CompactEditParam,
  ConversationRequest,
  ModelProfile,
} from '@model-messages/protocol';
import type { ModelPrompt } from '../backends/call/model-call.js';
import { compactionTrigger, scaledDefault, summaryInstructions } from './compaction.js';
import { clearEarlierThinking, thinkingTurnsKept } from './thinking-clearing.js';
import { clearToolUses, toolCallsIn } from './tool-use-clearing.js';

/** The public default trigger of clear_tool_uses, in input tokens. */
const TOOL_USES_TRIGGER_TOKENS = 100_000;

/** What the turn must do before it answers: write a summary of the prompt, and maybe stop there. */
export interface CompactionPlan {
  instructions: string;
  pauseAfter: boolean;
}

export interface EditedPrompt {
  prompt: ModelPrompt;
  /** The tokens of `prompt`, as `count` counted them. */
  inputTokens: number;
  /** The tokens of the prompt before any edit (count_tokens' `original_input_tokens`). */
  originalInputTokens: number;
  /** What each edit that changed the prompt cleared, in the order applied. */
  appliedEdits: AppliedEdit[];
  /** Set when the prompt reached compaction's trigger. */
  compaction: CompactionPlan | undefined;
}

/** Counts a prompt's tokens as the backend does. */
export type PromptCount = (prompt: ModelPrompt) => Promise<number>;

export async function editedPrompt(
  request: ConversationRequest,
  prompt: ModelPrompt,
  model: ModelProfile,
  count: PromptCount,
): Promise<EditedPrompt> {
  const edits = request.context_management?.edits;
  if (edits === undefined || edits.length === 0) {
    // Nearly every request: no edits, so nothing but the count, without the closures below.
    const inputTokens = await count(prompt);
    return { prompt, inputTokens, originalInputTokens: inputTokens, appliedEdits: [], compaction: undefined };
  }
  let current = prompt;
  /** The count of `current`; undefined until an edit needs it. */
  let tokens: number | undefined;
  let originalTokens: number | undefined;
  const counted = async (): Promise<number> => {
    tokens ??= await count(current);
    originalTokens ??= tokens;
    return tokens;
  };
  const appliedEdits: AppliedEdit[] = [];
  let compaction: CompactionPlan | undefined;
  for (const edit of edits) {
    if (edit.type === 'clear_thinking_20251015') {
      const cleared = clearEarlierThinking(current.turns, thinkingTurnsKept(edit));
      if (cleared.clearedTurns === 0) continue;
      const before = await counted();
      current = { ...current, turns: cleared.turns };
      tokens = await count(current);
      appliedEdits.push({
        type: edit.type,
        cleared_thinking_turns: cleared.clearedTurns,
        cleared_input_tokens: Math.max(0, before - tokens),
      });
    } else if (edit.type === 'clear_tool_uses_20250919') {
      if (!(await reachesToolUsesTrigger(edit, current, model, counted))) continue;
      const cleared = clearToolUses(current.turns, edit);
      if (cleared.clearedToolUses === 0) continue;
      const before = await counted();
      const after = await count({ ...current, turns: cleared.turns });
      // The public rule: an edit that cannot clear at least this much is not applied at all.
      if (before - after < (edit.clear_at_least?.value ?? 0)) continue;
      current = { ...current, turns: cleared.turns };
      tokens = after;
      appliedEdits.push({
        type: edit.type,
        cleared_tool_uses: cleared.clearedToolUses,
        cleared_input_tokens: Math.max(0, before - after),
      });
    } else if ((await counted()) >= compactionTrigger(edit, model)) {
      compaction = compactionPlan(edit);
    }
  }
  const inputTokens = await counted();
  return { prompt: current, inputTokens, originalInputTokens: originalTokens ?? inputTokens, appliedEdits, compaction };
}

/** Whether clear_tool_uses fires: the prompt reaches its tokens, or the conversation its tool uses. */
async function reachesToolUsesTrigger(
  edit: ClearToolUsesEditParam,
  prompt: ModelPrompt,
  model: ModelProfile,
  counted: () => Promise<number>,
): Promise<boolean> {
  const trigger = edit.trigger ?? { type: 'input_tokens', value: scaledDefault(TOOL_USES_TRIGGER_TOKENS, model) };
  if (trigger.type === 'tool_uses') return toolCallsIn(prompt.turns).length >= trigger.value;
  return (await counted()) >= trigger.value;
}

function compactionPlan(edit: CompactEditParam): CompactionPlan {
  return { instructions: summaryInstructions(edit), pauseAfter: edit.pause_after_compaction === true };
}
