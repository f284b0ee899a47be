/**
 * What a 2xx response to a structured call came to (spec: Errors, "Answer-level failures that
 * are not HTTP errors"), in this order: the budget ran out (truncated), the model answered
 * `Insufficient data` (only when the envelope is on: in it, or as its whole text), the output
 * tool was not called (declined), its input fails the caller's schema (invalid), or it is an
 * answer. Truncation comes first: a cut-off response is no decline, even without its tool call.
 * With the envelope, `Insufficient data` comes before declines: it is the answer the prompt
 * allows, not a skipped tool, so it is never counted, retried or replaced by a fallback. Without
 * it the prompt allows no such answer, so a reply of only that text skipped the tool like any
 * other (spec, Client retry policy 4: "each time the model skips its output tool is counted";
 * decision 0010).
 */
import { schemaViolation, type StopReason, type ToolUseBlock } from '@model-messages/protocol';
import type { FailureDetail } from '../call-account.js';
import { isInsufficientData } from '../prompts.js';
import type { FoldedMessage } from '../transport/message-folder.js';
import { inEnvelope, readAnswerEnvelope } from './answer-envelope.js';

export type AnswerOutcome =
  | { kind: 'answer'; value: unknown; toolUse: ToolUseBlock }
  | { kind: 'insufficient_data'; text: string }
  | { kind: 'truncated' }
  | { kind: 'declined'; text: string; stopReason: StopReason | null }
  /** `input`: the answer as the model gave it, unwrapped from the envelope when it could be; `toolUse` is the call as made, for the retry to replay. */
  | { kind: 'invalid'; violation: string; input: unknown; toolUse: ToolUseBlock };

/**
 * A 2xx whose body could not be read (transport/stream-attempt.ts): no message to classify, but
 * a successful response with no usable answer all the same, and a decline (spec, Client retry
 * policy 2 and 4; issue 32). `failure` is what the HTTP layer reported.
 */
export interface UnreadableOutcome {
  kind: 'unreadable';
  detail: string;
  failure: FailureDetail;
}

export function unreadableOutcome(failure: FailureDetail, body: { detail: string } | undefined): UnreadableOutcome {
  return { kind: 'unreadable', detail: body?.detail ?? failure.message, failure };
}

/** The outcomes the answer layer may retry once. */
export type RetryableOutcome = Exclude<AnswerOutcome, { kind: 'answer' | 'insufficient_data' }> | UnreadableOutcome;

export interface AnswerShape {
  toolName: string;
  /** The caller's schema, original constraints included. */
  schema: unknown;
  /** Whether the tool's input is the envelope `{answer: ...}` (answer-envelope.ts). */
  envelope: boolean;
}

export function classifyAnswer(folded: FoldedMessage, shape: AnswerShape): AnswerOutcome {
  const { message } = folded;
  if (message.stop_reason === 'max_tokens') return { kind: 'truncated' };
  const toolUse = message.content.find(
    (block): block is ToolUseBlock => block.type === 'tool_use' && block.name === shape.toolName,
  );
  if (!toolUse) {
    const text = textOf(message.content);
    return shape.envelope && isInsufficientData(text)
      ? { kind: 'insufficient_data', text }
      : { kind: 'declined', text, stopReason: message.stop_reason };
  }
  const unparsed = folded.unparsedInputs.get(toolUse.id);
  if (unparsed !== undefined)
    return {
      kind: 'invalid',
      violation: `the tool input is not valid JSON: ${unparsed.slice(0, 200)}`,
      input: toolUse.input,
      toolUse,
    };
  let value: unknown = toolUse.input;
  if (shape.envelope) {
    const reading = readAnswerEnvelope(toolUse.input);
    if (reading.kind === 'malformed')
      return { kind: 'invalid', violation: reading.violation, input: toolUse.input, toolUse };
    if (reading.kind === 'insufficient_data') return reading;
    value = reading.value;
  }
  const violation = schemaViolation(shape.schema, value, 'schema', { formats: true });
  // The violation names the path in the tool input the model wrote (the retry shows it that input); the caller gets the answer unwrapped.
  if (violation !== undefined)
    return { kind: 'invalid', violation: shape.envelope ? inEnvelope(violation) : violation, input: value, toolUse };
  return { kind: 'answer', value, toolUse };
}

export function textOf(content: FoldedMessage['message']['content']): string {
  return content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n')
    .trim();
}
