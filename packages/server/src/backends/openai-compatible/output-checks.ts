/**
 * The checks mms makes on engine output that must match a schema: a strict tool's input and an
 * `output_config.format` answer (Ajv through protocol's json-schema-validator, RE2 patterns);
 * the stop reason of a finished step; and the feedback a retry carries. Pure.
 */
import { schemaViolation, ServiceError, type StopReason } from '@mms/protocol';
import type { ChatMessage } from './chat-types.js';
import type { ChunkSummary, PendingCall } from './chunk-conversion.js';

export type CheckedInput =
  { input: Record<string, unknown>; violation?: undefined } | { input?: undefined; violation: string };

/** A held tool call's input: JSON, an object, and (for a strict tool) valid against its schema. */
export function checkCallInput(call: Pick<PendingCall, 'tool' | 'arguments'>): CheckedInput {
  const parsed = parseJson(call.arguments === '' ? '{}' : call.arguments);
  if ('violation' in parsed) return { violation: parsed.violation };
  if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value))
    return { violation: 'the input is not a JSON object' };
  const input = parsed.value as Record<string, unknown>;
  if (call.tool?.strict) {
    const violation = schemaViolation(call.tool.schema, input, call.tool.where);
    if (violation) return { violation };
  }
  return { input };
}

export function formatViolation(
  text: string,
  check: { schema: Record<string, unknown>; where: string },
): string | undefined {
  const parsed = parseJson(text);
  if ('violation' in parsed) return parsed.violation;
  return schemaViolation(check.schema, parsed.value, check.where);
}

function parseJson(text: string): { value: unknown } | { violation: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { violation: `not JSON (${(error as Error).message})` };
  }
}

/** What a retry after a format failure says: the answer as the model gave it, and why it was refused. */
export function formatRetryMessages(text: string, violation: string): ChatMessage[] {
  return [
    { role: 'assistant', content: text },
    {
      role: 'user',
      content: `That answer does not match the required JSON Schema: ${violation}. Answer again with one JSON value only, matching the schema.`,
    },
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
