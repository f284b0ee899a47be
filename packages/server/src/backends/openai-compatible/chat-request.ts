/**
 * One step of a Messages request as a chat completions request body for one engine. Pure.
 * Always streamed, with usage in the stream (unless a generic server is configured without
 * `stream_options`); the output budget is the step's, in `max_tokens` or, where configured,
 * `max_completion_tokens`.
 */
import { ServiceError } from '@model-messages/protocol';
import type { ModelPrompt, Sampling } from '../call/model-call.js';
import { toChatMessages } from './chat-messages.js';
import type { ChatCompletionRequest, ChatFunctionTool, ChatMessage } from './chat-types.js';
import type { EngineProfile } from './engine-profiles.js';
import { guidedFields, thinkingFields } from './guided-decoding.js';
import type { EngineKind } from './openai-compatible-config.js';
import type { ChatPlan } from './output-plan.js';

export interface ChatRequestInput {
  prompt: Pick<ModelPrompt, 'system' | 'turns' | 'thinking'>;
  /** None when only the prompt is wanted (a token count). */
  sampling: Sampling | undefined;
  plan: ChatPlan;
  engine: EngineKind;
  profile: EngineProfile;
  model: string;
  thinking: { on: Record<string, unknown>; off: Record<string, unknown> } | undefined;
  outputBudget: number;
  /** The served model takes images (the backend's `images`). */
  images: boolean;
  /** Appended after the conversation (a retry's feedback). */
  extraMessages?: ChatMessage[];
  /** The field that carries the output budget; `max_tokens` unless configured (generic servers). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Whether `stream_options.include_usage` is sent; true unless configured (generic servers). */
  streamOptions?: boolean;
}

export function toChatRequest(input: ChatRequestInput): ChatCompletionRequest {
  const { prompt, plan, profile } = input;
  const sampling = input.sampling;
  const messages = [
    ...toChatMessages(prompt, {
      instruction: plan.instruction,
      reasoningField: profile.reasoningHistoryField,
      images: input.images,
    }),
    ...(input.extraMessages ?? []),
  ];
  const body: ChatCompletionRequest = {
    model: input.model,
    messages,
    stream: true,
    ...(input.streamOptions === false ? {} : { stream_options: { include_usage: true } }),
    [input.maxTokensField ?? 'max_tokens']: input.outputBudget,
    ...thinkingFields(profile, input.thinking, prompt.thinking.on),
    ...guidedFields(profile, plan.guidedSchema),
  };
  if (sampling?.temperature !== undefined) body.temperature = sampling.temperature;
  if (sampling?.topP !== undefined) body.top_p = sampling.topP;
  if (sampling?.topK !== undefined) {
    if (!profile.topK)
      throw new ServiceError(
        'invalid_request',
        `top_k: the ${input.engine} engine's chat completions API has no top_k; leave it out`,
      );
    body.top_k = sampling.topK;
  }
  // Engines that report which stop string matched get them; for the others mms matches them in the text.
  if (sampling?.stopSequences.length && profile.stopReport && plan.content.kind === 'text')
    body.stop = sampling.stopSequences;
  if (plan.tools.length > 0) {
    body.tools = plan.tools.map((tool): ChatFunctionTool => ({
      type: 'function',
      function: {
        name: tool.name,
        description: tool.description,
        parameters: tool.inputSchema,
        ...(tool.strict && profile.sendsStrict ? { strict: true } : {}),
      },
    }));
    if (plan.toolChoice !== undefined) body.tool_choice = plan.toolChoice;
    // llama.cpp defaults to one call; the Messages API allows several unless told otherwise.
    if (plan.toolChoice !== 'none') body.parallel_tool_calls = plan.parallelToolCalls ?? true;
  }
  if (messages.at(-1)?.role === 'assistant' && profile.continueFinalMessage) {
    body.continue_final_message = true;
    body.add_generation_prompt = false;
  }
  return body;
}
