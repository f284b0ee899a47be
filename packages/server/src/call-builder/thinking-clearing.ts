/**
 * `clear_thinking_20251015`: the thinking of all but the last `keep` assistant turns that have
 * any is left out of the turns the model sees (Claude Code sends `keep: "all"`; the public API's
 * default is one turn). The caller's messages are not changed, only the prompt: so the count of
 * input tokens is what the model reads.
 */
import type { ContextManagementParam } from '@model-messages/protocol';
import type { Turn } from '../backends/call/model-call.js';

type ClearThinkingEdit = Extract<
  NonNullable<ContextManagementParam['edits']>[number],
  { type: 'clear_thinking_20251015' }
>;

/** Assistant turns whose thinking the model sees; Infinity to keep it all. */
export function thinkingTurnsKept(edit: ClearThinkingEdit): number {
  const keep = edit.keep ?? { type: 'thinking_turns', value: 1 };
  if (keep === 'all' || keep.type === 'all') return Infinity;
  return keep.value;
}

/** The turns with older thinking left out, and how many assistant turns lost theirs. */
export function clearEarlierThinking(turns: readonly Turn[], kept: number): { turns: Turn[]; clearedTurns: number } {
  if (kept === Infinity) return { turns: [...turns], clearedTurns: 0 };
  let seen = 0;
  let clearedTurns = 0;
  const cleared = [...turns];
  for (let index = cleared.length - 1; index >= 0; index -= 1) {
    const turn = cleared[index]!;
    if (turn.role !== 'assistant') continue;
    const thinks = turn.parts.some((part) => part.type === 'thinking' || part.type === 'redacted-thinking');
    if (!thinks) continue;
    seen += 1;
    if (seen <= kept) continue;
    clearedTurns += 1;
    cleared[index] = {
      role: 'assistant',
      parts: turn.parts.filter((part) => part.type !== 'thinking' && part.type !== 'redacted-thinking'),
    };
  }
  return { turns: cleared, clearedTurns };
}
