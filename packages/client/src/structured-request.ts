/**
 * The structured call shape (spec: Endpoints, "Structured call shape"): one custom tool with
 * `strict: true`, `tool_choice` forced to it with `disable_parallel_tool_use: true`, no
 * thinking (a model on the thinking list gets `disabled`, which is not thinking: decision 0002).
 * With `insufficientData` (always in research pass 2) the caller's schema goes inside an
 * `{answer: ...}` envelope that also admits `Insufficient data` (decision 0010); the client
 * unwraps it.
 */
import type { CustomToolParam, MessageRequest } from '@model-messages/protocol';
import type { ResolvedModel } from './client-options.js';
import { toolInputSchema } from './answer/answer-envelope.js';
import { dataTurn, INSUFFICIENT_DATA, structuredSystem, type DataTurn } from './prompts.js';
import type { JsonSchema } from './strict-schema.js';
import { withThinkingPolicy } from './thinking-policy.js';

export const DEFAULT_TOOL_NAME = 'record_answer';

export interface StructuredShape extends DataTurn {
  model: ResolvedModel;
  schema: JsonSchema;
  toolName: string;
  toolDescription: string | undefined;
  instructions: string;
  maxTokens: number;
  /** The `{answer: ...}` envelope with the `Insufficient data` escape (decision 0010). */
  insufficientData: boolean;
}

export function buildStructuredRequest(shape: StructuredShape, thinkingDisabled: ReadonlySet<string>): MessageRequest {
  const description = shape.insufficientData
    ? `Records the answer as {"answer": ...}. Call it exactly once. When the data does not support an answer, call it with {"answer": "${INSUFFICIENT_DATA}"}.`
    : 'Records the answer. Call it exactly once.';
  const request: MessageRequest = {
    model: shape.model.id,
    max_tokens: shape.maxTokens,
    system: structuredSystem(shape.instructions, shape.toolName, shape.insufficientData),
    messages: [{ role: 'user', content: dataTurn(shape) }],
    tools: [
      {
        name: shape.toolName,
        description: shape.toolDescription ?? description,
        strict: true,
        input_schema: toolInputSchema(shape.schema, shape.insufficientData) as CustomToolParam['input_schema'],
      },
    ],
    tool_choice: { type: 'tool', name: shape.toolName, disable_parallel_tool_use: true },
  };
  return withThinkingPolicy(request, shape.model, thinkingDisabled);
}
