/**
 * `context_management` edits, applied to the turns the model sees. `clear_thinking_20251015`
 * leaves out the thinking of all but the last `keep` assistant turns that have any (Claude Code
 * sends `keep: "all"`; the public API's default is one turn). The caller's messages are not
 * changed, only the prompt: so the count of input tokens is what the model reads.
 */
import type { ContextManagementParam } from '@model-messages/protocol';
import type { Turn } from '../backends/call/model-call.js';

/** Assistant turns whose thinking the model sees; Infinity without an edit, as before the edit existed. */
export function thinkingTurnsKept(contextManagement: ContextManagementParam | undefined): number {
  const edit = contextManagement?.edits?.find((candidate) => candidate.type === 'clear_thinking_20251015');
  if (!edit) return Infinity;
  const keep = edit.keep ?? { type: 'thinking_turns', value: 1 };
  if (keep === 'all' || keep.type === 'all') return Infinity;
  return keep.value;
}

export function clearEarlierThinking(turns: Turn[], kept: number): Turn[] {
  if (kept === Infinity) return turns;
  let seen = 0;
  const cleared = [...turns];
  for (let index = cleared.length - 1; index >= 0; index -= 1) {
    const turn = cleared[index]!;
    if (turn.role !== 'assistant') continue;
    const thinks = turn.parts.some((part) => part.type === 'thinking' || part.type === 'redacted-thinking');
    if (!thinks) continue;
    seen += 1;
    if (seen <= kept) continue;
    cleared[index] = {
      role: 'assistant',
      parts: turn.parts.filter((part) => part.type !== 'thinking' && part.type !== 'redacted-thinking'),
    };
  }
  return cleared;
}
