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
 * Where an endpoint cannot count (it is not served, or refuses the request's shape),
 * prompt-token-counter.ts falls back on that estimate; where the engine fails, so does the count.
 */
import type { ChatCompletionRequest, ChatMessage } from './chat-types.js';
import type { EngineClient } from './engine-client.js';
import type { EngineTokenizer } from './engine-profiles.js';
import { engineMessage, statusError } from './error-mapping.js';

const CHARACTERS_PER_TOKEN = 4;
const TOKENS_PER_MESSAGE = 4;
const TOKENS_PER_IMAGE = 1_600;
/**
 * What a chat template may add to a prompt's text, for the upper bound: its own instructions (a
 * default system prompt, the tool-calling section: Qwen3's is about 100 tokens, Llama 3.1's with
 * its dates about 150), and per message and per tool its framing (`<|im_start|>user\n` and its end).
 */
const TEMPLATE_TOKENS_BOUND = 1_024;
const TEMPLATE_TOKENS_PER_ITEM_BOUND = 32;

/**
 * The tokenizer endpoint cannot count this prompt, though the engine may generate well.
 * `lasting`: the endpoint is not there for us (not served, not open to us, not this API), so
 * every request would meet the same; otherwise only this request's shape was refused.
 */
export class TokenizerUnavailable extends Error {
  constructor(
    message: string,
    readonly lasting: boolean,
  ) {
    super(message);
    this.name = 'TokenizerUnavailable';
  }
}

/**
 * The count by the engine's tokenizer. Throws TokenizerUnavailable where the endpoint cannot
 * count, and the engine's failure (timeouts, refused connections, 5xx, 429) as it is: a hung or
 * failing engine is as much the request's problem here as at generation.
 */
export async function countPromptTokens(
  client: EngineClient,
  method: EngineTokenizer,
  body: ChatCompletionRequest,
): Promise<number> {
  switch (method) {
    case 'vllm':
      return countOf(await ask(client, '/tokenize', templateFields(body)), '/tokenize');
    case 'llama.cpp': {
      const rendered = await ask(client, '/apply-template', templateFields(body));
      const prompt = (rendered as { prompt?: unknown }).prompt;
      if (typeof prompt !== 'string') throw unexpected('/apply-template', rendered);
      const tokens = (await ask(client, '/tokenize', { content: prompt, add_special: true, parse_special: true })) as {
        tokens?: unknown;
      };
      if (!Array.isArray(tokens.tokens)) throw unexpected('/tokenize', tokens);
      return tokens.tokens.length;
    }
    case 'sglang': {
      const counted = await ask(client, '/tokenize', {
        model: body.model,
        prompt: conversationText(body),
        add_special_tokens: false,
      });
      return (
        countOf(counted, '/tokenize') +
        TOKENS_PER_MESSAGE * body.messages.length +
        imageCount(body.messages) * TOKENS_PER_IMAGE
      );
    }
    default:
      return method satisfies never;
  }
}

/**
 * What a tokenizer endpoint's non-200 answer means. Not served or not open to mms (a router
 * that forwards only `/v1/*` answers 404 or 405, an auth gateway 401 or 403, a server without
 * it 501), or a 400/422 refusing the fields themselves (an older API): the endpoint cannot
 * count for anyone. Another 400, 413 or 422 refuses this one prompt (a template that fails on
 * it, say): the chat completion will give the verdict on it. Anything else (408, 429, 5xx) is
 * the engine failing.
 */
export function tokenizerVerdict(status: number, bodyText: string): 'missing' | 'this-request' | 'failure' {
  if ([401, 403, 404, 405, 501].includes(status)) return 'missing';
  if (status === 400 || status === 422)
    return FIELDS_REFUSED.test(engineMessage(bodyText)) ? 'missing' : 'this-request';
  if (status === 413) return 'this-request';
  return 'failure';
}

/** Pydantic's and FastAPI's words for a body of the wrong shape, and servers' for a route they lack. */
const FIELDS_REFUSED =
  /field required|extra (inputs|fields) (are )?not permitted|unknown (field|parameter|argument)|unrecognized (field|argument|parameter)|not supported|unsupported|not implemented|not found|no such (route|endpoint|path)/i;

async function ask(client: EngineClient, path: string, body: unknown): Promise<unknown> {
  const answer = await client.post(`${client.root}${path}`, body);
  if (answer.status === 200) {
    try {
      return JSON.parse(answer.text) as unknown;
    } catch {
      throw unexpected(path, answer.text);
    }
  }
  const verdict = tokenizerVerdict(answer.status, answer.text);
  if (verdict === 'failure')
    throw statusError(client.engine, answer.status, answer.text, answer.retryAfter, client.modelLabel);
  const said = engineMessage(answer.text);
  throw new TokenizerUnavailable(`${path} answered ${answer.status}${said ? `: ${said}` : ''}`, verdict === 'missing');
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
  return promptSize(body).estimate;
}

/**
 * The prompt's estimate (4 characters a token, the spec's rule) and the tokens it cannot exceed,
 * known without a tokenizer: every tokenizer the engines load (byte-level BPE, SentencePiece
 * with byte fallback) spends at most one token per UTF-8 byte of text, tool definitions count
 * twice their compact JSON (a template may indent them), and the template adds at most the
 * allowances above. Images have no such bound (their tokens depend on the model's processor and
 * the image's size): a prompt with one has none.
 */
export function promptSize(body: ChatCompletionRequest): { estimate: number; upperBound: number } {
  // Summed, not joined: this runs on the event loop for every request, and a join copies the whole prompt.
  const pieces = conversationPieces(body);
  let characters = Math.max(pieces.length - 1, 0);
  let bytes = 0;
  for (const piece of pieces) {
    characters += piece.length;
    bytes += Buffer.byteLength(piece);
  }
  // The tool definitions are the last piece: counted once more for the bound.
  if (body.tools) bytes += Buffer.byteLength(pieces.at(-1) ?? '');
  const images = imageCount(body.messages);
  const items = body.messages.length + (body.tools?.length ?? 0);
  return {
    estimate:
      Math.ceil(characters / CHARACTERS_PER_TOKEN) +
      TOKENS_PER_MESSAGE * body.messages.length +
      images * TOKENS_PER_IMAGE,
    upperBound:
      images > 0 ? Number.POSITIVE_INFINITY : bytes + items * TEMPLATE_TOKENS_PER_ITEM_BOUND + TEMPLATE_TOKENS_BOUND,
  };
}

/** The conversation's text as the model reads it: contents, calls, and the tool definitions. */
function conversationText(body: ChatCompletionRequest): string {
  return conversationPieces(body).join('\n');
}

function conversationPieces(body: ChatCompletionRequest): string[] {
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
  return pieces;
}

function imageCount(messages: readonly ChatMessage[]): number {
  return messages.reduce(
    (count, message) =>
      count +
      (typeof message.content === 'string' ? 0 : message.content.filter((part) => part.type === 'image_url').length),
    0,
  );
}

function countOf(answer: unknown, path: string): number {
  const value = (answer as Record<string, unknown>).count;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw unexpected(path, answer);
  return value;
}

/** A 200 in a shape that is not this endpoint's: something else answers on that path. */
function unexpected(path: string, answer: unknown): TokenizerUnavailable {
  return new TokenizerUnavailable(
    `${path} answered in an unexpected shape: ${JSON.stringify(answer).slice(0, 200)}`,
    true,
  );
}
