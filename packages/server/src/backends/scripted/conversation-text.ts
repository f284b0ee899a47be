/** What the scripted "model" reads of a conversation. */
import type { Turn } from '../call/model-call.js';

function textOf(turn: Turn): string {
  const texts: string[] = [];
  for (const part of turn.parts) if (part.type === 'text') texts.push(part.text);
  return texts.join('\n');
}

/** Index of the last user turn that carries text (a turn of tool results only does not count). */
function lastUserTextIndex(turns: readonly Turn[]): number {
  return turns.findLastIndex(
    (turn) => turn.role === 'user' && turn.parts.some((part) => part.type === 'text' && part.text !== ''),
  );
}

/** The text of the last user turn that has text; the script's `when` is matched against it. */
export function lastUserText(turns: readonly Turn[]): string {
  const turn = turns[lastUserTextIndex(turns)];
  return turn ? textOf(turn) : '';
}

/**
 * Steps taken since the last user text, so that a client tool round trip, a paused turn sent
 * back, and the turn loop's own steps after server tools move the script on. An assistant turn
 * holds one step per run of server tool results (each such step ended by running server tools),
 * plus the step that ended it unless it ends on a result (then the next step is the one to run).
 */
export function stepsSinceUserText(turns: readonly Turn[]): number {
  const start = lastUserTextIndex(turns);
  return turns
    .slice(start + 1)
    .filter((turn) => turn.role === 'assistant')
    .reduce((steps, turn) => steps + stepsIn(turn), 0);
}

function stepsIn(turn: Turn): number {
  let resultRuns = 0;
  let inRun = false;
  for (const part of turn.parts) {
    const isResult = part.type === 'tool-result' && part.server;
    if (isResult && !inRun) resultRuns += 1;
    inRun = isResult;
  }
  return resultRuns + (inRun ? 0 : 1);
}

/** Text of client tool results in the last user turn, for the default answer after a tool round trip. */
export function lastToolResultText(turns: readonly Turn[]): string {
  // A system message after the results (a reminder) does not hide them.
  const last = turns.findLast((turn) => turn.role !== 'system');
  if (last?.role !== 'user') return '';
  const texts: string[] = [];
  for (const part of last.parts) {
    if (part.type !== 'tool-result') continue;
    for (const inner of part.content) if (inner.type === 'text') texts.push(inner.text);
  }
  return texts.join('\n');
}
