/**
 * An `output_config.format` answer, checked against its schema before the step ends (output cut
 * by max_tokens or a stop sequence is not checked: it is not a whole answer).
 *
 * Output its schema's own grammar guided was streamed as it came: a failure there is the grammar
 * breaking its guarantee, a 502. A held answer was guided by nothing (tools were offered, and
 * node-llama-cpp cannot combine a grammar with functions) or only by JSON syntax (the schema has
 * keywords the grammar cannot express); the caller has seen none of it, so a failure is asked for
 * once more, with the answer and the violation replayed, and only a second failure is a 502
 * (docs/backends.md: the same rule as on the openai-compatible backend).
 */
import type { ChatHistoryItem, ChatModelResponse } from 'node-llama-cpp';
import { ServiceError, type StopReason } from '@mms/protocol';
import type { StreamPart } from '../../streaming/stream-part.js';
import type { CollectedText } from './collect-text.js';
import { outputViolation, type StructuredTarget } from './structured-output.js';

export interface FormatCheck {
  target: StructuredTarget;
  /** The answer has not reached the caller yet, so it can be asked for again. */
  held: boolean;
  /** Output tokens the step may still spend. */
  remaining: () => number;
  /** The answer once more, under the format's grammar, after `answer` failed with `violation`. */
  retry: (answer: string, violation: string, maxTokens: number) => Promise<CollectedText>;
}

export interface FormatOutcome {
  /** What the caller gets instead of the held parts, when the answer was asked for again. */
  replacement: StreamPart[] | undefined;
  stopReason: StopReason;
}

export async function checkFormatAnswer(answer: string, check: FormatCheck): Promise<FormatOutcome> {
  const { where } = check.target;
  const violation = outputViolation(answer, check.target);
  if (violation === undefined) return { replacement: undefined, stopReason: 'end_turn' };
  if (!check.held)
    throw new ServiceError('model_output_invalid', `grammar-constrained output failed ${where}: ${violation}`);
  const budget = check.remaining();
  if (budget <= 0) throw new ServiceError('model_output_invalid', `the model's answer failed ${where}: ${violation}`);
  const second = await check.retry(answer, violation, budget);
  const replacement = textBlock(second.text);
  if (second.truncated) return { replacement, stopReason: 'max_tokens' };
  const secondViolation = outputViolation(second.text, check.target);
  if (secondViolation !== undefined)
    throw new ServiceError('model_output_invalid', `the model's answer failed ${where} twice: ${secondViolation}`);
  return { replacement, stopReason: 'end_turn' };
}

/** The conversation of the first attempt, its answer, and why it was refused: the prompt of the second. */
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
    {
      type: 'user',
      text: `That answer does not match the required JSON Schema: ${violation}. Answer again with one JSON value only, matching the schema.`,
    },
    { type: 'model', response: [] },
  ];
}

function textBlock(text: string): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'block-start', block: { type: 'text', text: '', citations: null } }];
  if (text !== '') parts.push({ type: 'block-delta', delta: { type: 'text_delta', text } });
  parts.push({ type: 'block-stop' });
  return parts;
}
