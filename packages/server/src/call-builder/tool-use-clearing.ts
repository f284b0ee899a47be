/**
 * `clear_tool_uses_20250919` (issue 34), as the public docs describe it: once the prompt reaches
 * its trigger, the results of the oldest tool uses are replaced by a line that says they were
 * cleared, all but the last `keep` (default 3) and those of `exclude_tools`; with
 * `clear_tool_inputs` the calls' inputs are cleared too (all of them, or those of the tools it
 * names). Client and server tools alike: a web search's results are as large as any. Applied to
 * the turns the model sees, never to the caller's messages, which keep the whole history. Whether
 * it applies at all (the trigger, `clear_at_least`) is decided where the prompt is counted
 * (context-management.ts).
 */
import type { ClearToolUsesEditParam } from '@model-messages/protocol';
import type { AssistantPart, Turn, UserPart } from '../backends/call/model-call.js';

/** What the model reads in place of a cleared result. */
export const CLEARED_RESULT = '[This tool result was cleared from the context to save space.]';

/** The public default: the three most recent tool uses keep their results. */
const DEFAULT_KEPT = 3;

interface Call {
  id: string;
  name: string;
}

/** Tool calls in the turns, client and server, oldest first. */
export function toolCallsIn(turns: readonly Turn[]): Call[] {
  const calls: Call[] = [];
  for (const turn of turns)
    if (turn.role === 'assistant')
      for (const part of turn.parts) if (part.type === 'tool-call') calls.push({ id: part.id, name: part.name });
  return calls;
}

/** The turns with the oldest tool uses cleared, and how many were; the same turns when none is. */
export function clearToolUses(
  turns: readonly Turn[],
  edit: ClearToolUsesEditParam,
): { turns: Turn[]; clearedToolUses: number } {
  const excluded = new Set(edit.exclude_tools ?? []);
  const clearable = toolCallsIn(turns).filter((call) => !excluded.has(call.name));
  const kept = edit.keep?.value ?? DEFAULT_KEPT;
  const cleared = clearable.slice(0, Math.max(0, clearable.length - kept));
  if (cleared.length === 0) return { turns: [...turns], clearedToolUses: 0 };
  const results = new Set(cleared.map((call) => call.id));
  const inputs = clearedInputs(cleared, edit.clear_tool_inputs);
  return { turns: turns.map((turn) => clearedTurn(turn, results, inputs)), clearedToolUses: cleared.length };
}

/** The calls whose inputs are cleared too: none, all the cleared ones, or those of the tools named. */
function clearedInputs(
  cleared: readonly Call[],
  clearInputs: ClearToolUsesEditParam['clear_tool_inputs'],
): Set<string> {
  if (clearInputs === true) return new Set(cleared.map((call) => call.id));
  if (!Array.isArray(clearInputs)) return new Set();
  const names = new Set(clearInputs);
  return new Set(cleared.filter((call) => names.has(call.name)).map((call) => call.id));
}

/** A turn with its cleared results and inputs replaced; parts are copied, never changed in place. */
function clearedTurn(turn: Turn, results: ReadonlySet<string>, inputs: ReadonlySet<string>): Turn {
  if (turn.role === 'system') return turn;
  const parts = (turn.parts as Array<UserPart | AssistantPart>).map((part) => {
    if (part.type === 'tool-result' && results.has(part.callId))
      return { ...part, content: [{ type: 'text' as const, text: CLEARED_RESULT }], isError: false };
    if (part.type === 'tool-call' && inputs.has(part.id)) return { ...part, input: {} };
    return part;
  });
  return { role: turn.role, parts } as Turn;
}
