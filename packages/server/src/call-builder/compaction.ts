/**
 * Compaction (context_management `compact_20260112`, issue 34), as the call builder sees it: the
 * prompt that asks the request's own model for a summary, the turn the summary becomes, and the
 * triggers. The agent loop writes the summary (agent/compaction-step.ts); a later request that
 * carries the compaction block back starts its conversation there (conversation.ts).
 */
import { COMPACTION_TRIGGER, type CompactEditParam, type ModelProfile } from '@model-messages/protocol';
import type { ModelPrompt, Turn } from '../backends/call/model-call.js';

/**
 * The window the public API's default triggers were set for. A model with a smaller window
 * gets the same share of its own, since a trigger past its window could never be reached: its
 * requests would be refused as too long instead.
 */
const PUBLIC_WINDOW = 200_000;

/** What the model is asked when no `instructions` replace it: our words, to the public API's intent. */
export const SUMMARY_INSTRUCTIONS =
  'Write a summary of the conversation so far, to continue it from the summary alone: the messages above will be replaced by it. ' +
  'Keep what the user asked for and every constraint they set, the decisions made and why, the names, paths, numbers and results that later work needs, ' +
  'and the tools used and what they found. End with the latest request and what remains to be done. Write plain text, with no preamble.';

/** Input tokens at which compaction fires: the edit's, else the public 150,000 scaled to the window. */
export function compactionTrigger(edit: CompactEditParam, model: ModelProfile): number {
  if (edit.trigger) return edit.trigger.value;
  return scaledDefault(COMPACTION_TRIGGER.defaultTokens, model, COMPACTION_TRIGGER.minTokens);
}

/** A public default trigger, as the same share of a smaller window; never under `floor`. */
export function scaledDefault(tokens: number, model: ModelProfile, floor = 1): number {
  const scaled = Math.floor((tokens * Math.min(model.contextWindow, PUBLIC_WINDOW)) / PUBLIC_WINDOW);
  return Math.max(floor, scaled);
}

/** The instructions the summary is written to: the edit's own, unless empty or blank. */
export function summaryInstructions(edit: CompactEditParam): string {
  const given = edit.instructions?.trim();
  return given ? given : SUMMARY_INSTRUCTIONS;
}

/**
 * The prompt that asks for the summary: the request's own, so an engine reuses its evaluation,
 * with the instructions as a user turn after it; plain text, no tools called, no thinking.
 */
export function summaryPrompt(prompt: ModelPrompt, instructions: string): ModelPrompt {
  return {
    ...prompt,
    turns: [...prompt.turns, { role: 'user', parts: [{ type: 'text', text: instructions }] }],
    output: { kind: 'answer', format: undefined, toolsAllowed: false },
    singleCall: false,
    // Unset rather than disabled: a newer model upstream refuses `disabled` (rule 5).
    thinking: {
      on: false,
      budgetTokens: undefined,
      requested: undefined,
      effort: prompt.thinking.effort,
      display: undefined,
    },
  };
}

/** What the model reads in place of everything a compaction block summarized. */
export function summaryTurn(summary: string): Turn {
  return {
    role: 'user',
    parts: [
      {
        type: 'text',
        text: `This conversation was compacted: what came before is replaced by this summary of it.\n\n${summary}`,
      },
    ],
  };
}

/** The prompt once compacted: the system prompt and tools, then the summary. */
export function compactedPrompt(prompt: ModelPrompt, summary: string): ModelPrompt {
  return { ...prompt, turns: [summaryTurn(summary)] };
}
