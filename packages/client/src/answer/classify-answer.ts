/**
 * What a 2xx response to a structured call came to (spec: Errors, "Answer-level failures that
 * are not HTTP errors"), in this order: the budget ran out (truncated), the output tool was not
 * called (declined), its input fails the caller's schema (invalid), or it is an answer.
 * Truncation comes first: a cut-off response is no decline, even without its tool call.
 */
import { schemaViolation, type StopReason, type ToolUseBlock } from '@mms/protocol';
import type { FoldedMessage } from '../transport/message-folder.js';

export type AnswerOutcome =
  | { kind: 'answer'; value: unknown; toolUse: ToolUseBlock }
  | { kind: 'truncated' }
  | { kind: 'declined'; text: string; stopReason: StopReason | null }
  | { kind: 'invalid'; violation: string; toolUse: ToolUseBlock };

export function classifyAnswer(folded: FoldedMessage, toolName: string, schema: unknown): AnswerOutcome {
  const { message } = folded;
  if (message.stop_reason === 'max_tokens') return { kind: 'truncated' };
  const toolUse = message.content.find((block): block is ToolUseBlock => block.type === 'tool_use' && block.name === toolName);
  if (!toolUse) return { kind: 'declined', text: textOf(message.content), stopReason: message.stop_reason };
  const unparsed = folded.unparsedInputs.get(toolUse.id);
  if (unparsed !== undefined) return { kind: 'invalid', violation: `the tool input is not valid JSON: ${unparsed.slice(0, 200)}`, toolUse };
  const violation = schemaViolation(schema, toolUse.input, 'schema', { formats: true });
  if (violation !== undefined) return { kind: 'invalid', violation, toolUse };
  return { kind: 'answer', value: toolUse.input, toolUse };
}

export function textOf(content: FoldedMessage['message']['content']): string {
  return content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n').trim();
}
