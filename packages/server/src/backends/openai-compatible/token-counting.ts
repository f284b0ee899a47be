/**
 * The prompt's tokens, through the engine's own tokenizer where it has an endpoint for it:
 * - vLLM: `POST /tokenize` takes the chat messages and tools and applies the chat template
 *   (vllm/entrypoints/openai: TokenizeChatRequest); exact.
 * - llama.cpp server: `POST /apply-template` renders the messages with the model's template,
 *   `POST /tokenize` counts the rendered prompt (tools/server/README.md); exact.
 * - SGLang: `POST /tokenize` takes a `prompt` string only, not messages, so the conversation's
 *   text is counted by the model's tokenizer and the template's own tokens are estimated at
 *   4 per message; close, not exact.
 * - Ollama and generic servers have no tokenizer endpoint in their OpenAI API: 4 characters
 *   per token, the spec's own rule (Limits), plus 4 per message and 1,600 per image (the
 *   public API's figure for a 1.15 megapixel image).
 * Where an endpoint fails, prompt-token-counter.ts falls back on that estimate.
 */
import { ServiceError } from '@mms/protocol';
import type { ChatCompletionRequest, ChatMessage } from './chat-types.js';
import type { EngineClient } from './engine-client.js';
import type { EngineProfile } from './engine-profiles.js';

const CHARACTERS_PER_TOKEN = 4;
const TOKENS_PER_MESSAGE = 4;
const TOKENS_PER_IMAGE = 1_600;

/** The count by the engine's tokenizer; throws when its endpoint fails (prompt-token-counter.ts decides what then). */
export async function countPromptTokens(client: EngineClient, profile: EngineProfile, body: ChatCompletionRequest, signal?: AbortSignal): Promise<number> {
  const method = profile.tokenizer;
  switch (method) {
    case 'vllm':
      return countOf(await client.postJson(`${client.root}/tokenize`, templateFields(body), signal), 'count');
    case 'llama.cpp': {
      const rendered = await client.postJson(`${client.root}/apply-template`, templateFields(body), signal);
      const prompt = (rendered as { prompt?: unknown }).prompt;
      if (typeof prompt !== 'string') throw unexpected('apply-template', rendered);
      const tokens = (await client.postJson(`${client.root}/tokenize`, { content: prompt, add_special: true, parse_special: true }, signal)) as { tokens?: unknown };
      if (!Array.isArray(tokens.tokens)) throw unexpected('tokenize', tokens);
      return tokens.tokens.length;
    }
    case 'sglang': {
      const counted = await client.postJson(`${client.root}/tokenize`, { model: body.model, prompt: conversationText(body), add_special_tokens: false }, signal);
      return countOf(counted, 'count') + TOKENS_PER_MESSAGE * body.messages.length + imageCount(body.messages) * TOKENS_PER_IMAGE;
    }
    case 'estimate':
      return estimateTokens(body);
    default:
      return method satisfies never;
  }
}

/** What the chat template sees: the same messages, tools and switches as the generation request. */
function templateFields(body: ChatCompletionRequest): Record<string, unknown> {
  const { model, messages, tools, tool_choice, chat_template_kwargs, continue_final_message } = body;
  const fields: Record<string, unknown> = { model, messages, add_generation_prompt: continue_final_message !== true };
  if (tools) fields.tools = tools;
  if (tool_choice) fields.tool_choice = tool_choice;
  if (chat_template_kwargs) fields.chat_template_kwargs = chat_template_kwargs;
  if (continue_final_message) fields.continue_final_message = true;
  return fields;
}

export function estimateTokens(body: ChatCompletionRequest): number {
  const characters = conversationText(body).length;
  return Math.ceil(characters / CHARACTERS_PER_TOKEN) + TOKENS_PER_MESSAGE * body.messages.length + imageCount(body.messages) * TOKENS_PER_IMAGE;
}

/** The conversation's text as the model reads it: contents, calls, and the tool definitions. */
function conversationText(body: ChatCompletionRequest): string {
  const pieces: string[] = [];
  for (const message of body.messages) {
    if (typeof message.content === 'string') pieces.push(message.content);
    else for (const part of message.content) if (part.type === 'text') pieces.push(part.text);
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) pieces.push(call.function.name, call.function.arguments);
      if (message.reasoning_content) pieces.push(message.reasoning_content);
      if (message.reasoning) pieces.push(message.reasoning);
    }
  }
  if (body.tools) pieces.push(JSON.stringify(body.tools));
  return pieces.join('\n');
}

function imageCount(messages: readonly ChatMessage[]): number {
  return messages.reduce((count, message) => count + (typeof message.content === 'string' ? 0 : message.content.filter((part) => part.type === 'image_url').length), 0);
}

function countOf(answer: unknown, field: string): number {
  const value = (answer as Record<string, unknown>)[field];
  if (typeof value !== 'number' || !Number.isInteger(value)) throw unexpected('tokenize', answer);
  return value;
}

function unexpected(endpoint: string, answer: unknown): ServiceError {
  return new ServiceError('internal', `the engine's /${endpoint} answered in an unexpected shape: ${JSON.stringify(answer).slice(0, 200)}`);
}
