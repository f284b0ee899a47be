/**
 * The structured call shape (spec: Endpoints, "Structured call shape"): one custom tool with
 * `strict: true`, `tool_choice` forced to it with `disable_parallel_tool_use: true`, no
 * thinking (a model on the thinking list gets `disabled`, which is not thinking: decision 0002).
 */
import type { CustomToolParam, MessageRequest } from '@mms/protocol';
import type { ResolvedModel } from './client-options.js';
import { dataTurn, structuredSystem, type DataTurn } from './prompts.js';
import { toStrictSchema, type JsonSchema } from './strict-schema.js';
import { withThinkingPolicy } from './thinking-policy.js';

export const DEFAULT_TOOL_NAME = 'record_answer';

export interface StructuredShape extends DataTurn {
  model: ResolvedModel;
  schema: JsonSchema;
  toolName: string;
  toolDescription: string | undefined;
  instructions: string;
  maxTokens: number;
}

export function buildStructuredRequest(shape: StructuredShape, thinkingDisabled: ReadonlySet<string>): MessageRequest {
  const request: MessageRequest = {
    model: shape.model.id,
    max_tokens: shape.maxTokens,
    system: structuredSystem(shape.instructions, shape.toolName),
    messages: [{ role: 'user', content: dataTurn(shape) }],
    tools: [{ name: shape.toolName, description: shape.toolDescription ?? 'Records the answer. Call it exactly once.', strict: true, input_schema: toStrictSchema(shape.schema) as CustomToolParam['input_schema'] }],
    tool_choice: { type: 'tool', name: shape.toolName, disable_parallel_tool_use: true },
  };
  return withThinkingPolicy(request, shape.model, thinkingDisabled);
}
