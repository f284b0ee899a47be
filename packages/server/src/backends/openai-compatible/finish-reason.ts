/**
 * What a finished engine output means, and what a format retry tells the engine. The checks of
 * schema-bound output itself are every engine's one check (call/output-check.ts).
 */
import { ServiceError, type StopReason } from '@model-messages/protocol';
import { formatRetryNote } from '../call/output-check.js';
import type { ChatMessage } from './chat-types.js';
import type { ChunkSummary } from './chunk-summary.js';

/** A retry after a format failure: the answer as the model gave it, and why it was refused. */
export function formatRetryMessages(text: string, violation: string): ChatMessage[] {
  return [
    { role: 'assistant', content: text },
    { role: 'user', content: formatRetryNote(violation) },
  ];
}

/**
 * The stop reason of a finished engine output. A stop string counts only if the request asked
 * for it (vLLM also reports its own stop token ids there). An output that ended with neither a
 * finish reason nor `[DONE]` was cut off: an error, not an answer.
 */
export function stopOf(
  summary: ChunkSummary,
  stopSequences: readonly string[],
  sawDone: boolean,
  engine: string,
): { reason: StopReason; sequence: string | null } {
  if (summary.stopString !== undefined && stopSequences.includes(summary.stopString))
    return { reason: 'stop_sequence', sequence: summary.stopString };
  const calls = summary.calls.length > 0;
  const ended = calls ? 'tool_use' : 'end_turn';
  switch (summary.finishReason) {
    case 'length':
      return { reason: 'max_tokens', sequence: null };
    case 'content_filter':
      return { reason: 'refusal', sequence: null };
    case 'stop':
    case 'tool_calls':
    case 'function_call':
      return { reason: ended, sequence: null };
    case undefined:
      if (sawDone) return { reason: ended, sequence: null };
      throw new ServiceError('internal', `the ${engine} engine's stream ended before the output finished`);
    case 'abort':
      throw new ServiceError('internal', `the ${engine} engine aborted the generation`);
    default:
      throw new ServiceError(
        'internal',
        `the ${engine} engine ended with an unknown finish_reason "${summary.finishReason}"`,
      );
  }
}
