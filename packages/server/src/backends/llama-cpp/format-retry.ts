/**
 * The prompt of a format answer asked for once more (call/output-check.ts decides when): the
 * conversation of the first attempt, its answer, and why it was refused.
 */
import type { ChatHistoryItem, ChatModelResponse } from 'node-llama-cpp';
import { formatRetryNote } from '../call/output-check.js';

export function formatRetryHistory(
  history: readonly ChatHistoryItem[],
  answer: string,
  violation: string,
): ChatHistoryItem[] {
  // The last item is the model turn that was generated (toChatHistory ends with it, prefill included).
  const generated = history.at(-1) as ChatModelResponse;
  return [
    ...history.slice(0, -1),
    { type: 'model', response: [...generated.response, answer] },
    { type: 'user', text: formatRetryNote(violation) },
    { type: 'model', response: [] },
  ];
}
