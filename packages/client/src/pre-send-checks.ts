/**
 * Checks that run before any byte is sent (issue 5): the request's shape, the endpoint rules
 * from @model-messages/protocol (strict keywords, thinking with a forced strict tool, programmatic calling,
 * a prefill with tools, `disabled` to a mid or large model of either generation, the output budget), and the
 * prompt's size against the budget arithmetic. The service would refuse each of them anyway;
 * refusing here costs no round trip and no retry, and says so.
 */
import {
  checkMessageRules,
  compileSchema,
  parseMessageRequest,
  ServiceError,
  type ContentBlockParam,
  type MessageRequest,
} from '@model-messages/protocol';
import { maxPromptChars } from './budgets.js';
import type { ResolvedModel } from './client-options.js';
import { PreSendError } from './errors.js';
import { wrapAnswerSchema } from './answer/answer-envelope.js';
import { assertStrictSchema, StrictSchemaError, toStrictSchema, type JsonSchema } from './strict-schema.js';
import { assertThinkingSendable } from './thinking-policy.js';

export interface PreSendOptions {
  bufferTokens: number;
  /**
   * Off only for a truncation retry: it keeps the prompt and grows `max_tokens` within what the
   * service counted (`usage.input_tokens`, budgets.ts outputBudgetGrowth). Every request that
   * grows the prompt (a decline, invalid or guardrail retry, a continuation) is checked.
   */
  checkPromptSize: boolean;
}

export function checkBeforeSend(request: MessageRequest, model: ResolvedModel, options: PreSendOptions): void {
  // Before the shared rules: they refuse `disabled` to the newer generation only (issue 32).
  assertThinkingSendable(request, model);
  try {
    checkMessageRules(parseMessageRequest(request), model);
  } catch (error) {
    if (error instanceof ServiceError)
      throw new PreSendError(error.code, `${error.message} (refused by the client before sending)`, { cause: error });
    throw error;
  }
  if (!options.checkPromptSize) return;
  const limit = maxPromptChars({
    contextWindow: model.keptWindow,
    maxOutputTokens: request.max_tokens,
    bufferTokens: options.bufferTokens,
  });
  const size = promptChars(request);
  if (size > limit) {
    throw new PreSendError(
      'prompt_too_long',
      `the prompt has ${size} characters; ${model.id} allows ${limit} = (${model.keptWindow} window - ${request.max_tokens} max_tokens - ${options.bufferTokens} buffer) x 4 (refused by the client before sending)`,
    );
  }
}

/**
 * checkBeforeSend for a request that follows others already paid for (a retry, a continuation,
 * research pass 2): the problem comes back as a value, so that the call can return a typed
 * failure with the usage, request ids and research it has, rather than throw them away.
 */
export function preSendProblem(
  request: MessageRequest,
  model: ResolvedModel,
  options: PreSendOptions,
): PreSendError | undefined {
  try {
    checkBeforeSend(request, model, options);
    return undefined;
  } catch (error) {
    if (error instanceof PreSendError) return error;
    throw error;
  }
}

/** How a failure says its retry was refused before sending: the code the service would answer, and why. */
export function retryNotSent(problem: PreSendError): string {
  return `the retry was not sent (${problem.code}): ${problem.message}`;
}

/**
 * The caller's answer schema, as it will be sent: it must become a strict tool schema (inside the
 * `Insufficient data` envelope when `envelope` is on, which nests it two levels deeper and adds
 * four subschemas as the cap counts them, so the caps apply to that) and compile for the answer check. Run before the
 * first byte of a call, so that a research call cannot fail on its pass 2 schema after pass 1
 * was paid for.
 */
export function checkAnswerSchema(schema: JsonSchema, envelope: boolean): void {
  let strict: JsonSchema;
  try {
    strict = toStrictSchema(schema);
    compileSchema(schema, 'schema', { formats: true });
  } catch (error) {
    if (error instanceof StrictSchemaError || error instanceof ServiceError)
      throw new PreSendError('invalid_request', `schema: ${error.message} (refused by the client before sending)`, {
        cause: error,
      });
    throw error;
  }
  if (!envelope) return;
  try {
    assertStrictSchema(wrapAnswerSchema(strict));
  } catch (error) {
    if (!(error instanceof StrictSchemaError)) throw error;
    const where =
      'inside the Insufficient data envelope {"answer": ...} (research pass 2, or insufficientData: true; decision 0010), which nests it two levels deeper';
    throw new PreSendError(
      'invalid_request',
      `schema, ${where}: ${error.message} (refused by the client before sending)`,
      { cause: error },
    );
  }
}

/** Characters the model reads: text as text, everything structured (tools, tool blocks) as JSON. */
export function promptChars(request: Pick<MessageRequest, 'system' | 'messages' | 'tools'>): number {
  const system =
    typeof request.system === 'string'
      ? request.system.length
      : (request.system ?? []).reduce((sum, block) => sum + block.text.length, 0);
  const messages = request.messages.reduce(
    (sum, message) =>
      sum +
      (typeof message.content === 'string'
        ? message.content.length
        : (message.content ?? []).reduce((inner: number, block: ContentBlockParam) => inner + blockChars(block), 0)),
    0,
  );
  return system + messages + (request.tools ? JSON.stringify(request.tools).length : 0);
}

function blockChars(block: ContentBlockParam): number {
  if (block.type === 'text') return block.text.length;
  if (block.type === 'thinking') return block.thinking.length;
  if (block.type === 'tool_result' && typeof block.content === 'string') return block.content.length;
  return JSON.stringify(block).length;
}
