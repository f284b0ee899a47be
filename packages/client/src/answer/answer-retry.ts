/**
 * The answer layer's one retry (spec: Client retry policy 2), or why there is none. A retry
 * always changes the request:
 * - truncated: `max_tokens` doubled, capped by the model's limit and the context;
 * - declined: the model's text replayed as an assistant turn, a user turn asking for the tool,
 *   the tool still forced;
 * - invalid: the call replayed, answered by an error tool_result naming the validation error;
 * - unreadable (a 2xx whose body is no message): the request as it was, once in the whole call
 *   (issue 32). Nothing of the reply can be replayed, and the rule "retry only when the request
 *   changes" is the spec's for a reply the client read and found without its tool call: the
 *   model's choice, which the same request would repeat. An unreadable body shows no choice.
 */
import type { MessageParam, MessageRequest, ToolUseBlock } from '@model-messages/protocol';
import { outputBudgetGrowth } from '../budgets.js';
import type { ResolvedModel } from '../client-options.js';
import type { RetryableOutcome } from './classify-answer.js';
import { UNREADABLE_RETRY_SPENT, unreadableRetryReason } from './unreadable-retry.js';

export type RetryDecision = { retry: true; request: MessageRequest; reason: string } | { retry: false; why: string };

export interface RetryLimits {
  model: ResolvedModel;
  bufferTokens: number;
  /** `usage.input_tokens` of the truncated response: the prompt as the service counted it. */
  inputTokens: number;
  /** Whether the call already retried an unreadable 2xx (CallAccount.unreadableRetrySpent). */
  unreadableRetrySpent: boolean;
}

export function answerRetry(
  request: MessageRequest,
  outcome: RetryableOutcome,
  toolName: string,
  limits: RetryLimits,
): RetryDecision {
  switch (outcome.kind) {
    case 'truncated': {
      const growth = outputBudgetGrowth(request.max_tokens, {
        modelMaxOutputTokens: limits.model.maxOutputTokens,
        contextWindow: limits.model.keptWindow,
        inputTokens: limits.inputTokens,
        bufferTokens: limits.bufferTokens,
      });
      if (growth.next === undefined) return { retry: false, why: growth.why };
      return {
        retry: true,
        request: { ...request, max_tokens: growth.next },
        reason: `truncated at max_tokens ${request.max_tokens}; retrying with ${growth.next}`,
      };
    }
    case 'declined':
      return {
        retry: true,
        request: { ...request, messages: askForTool(request.messages, outcome.text, toolName) },
        reason: `the model did not call "${toolName}"`,
      };
    case 'invalid':
      return {
        retry: true,
        request: replayWithError(
          request,
          outcome.toolUse,
          `The input failed validation: ${outcome.violation}. Call "${toolName}" again with input that satisfies its schema.`,
        ),
        reason: `the tool input is invalid: ${outcome.violation}`,
      };
    case 'unreadable':
      if (limits.unreadableRetrySpent) return { retry: false, why: UNREADABLE_RETRY_SPENT };
      return { retry: true, request, reason: unreadableRetryReason(outcome) };
    default:
      return outcome satisfies never;
  }
}

/**
 * The text replayed as an assistant turn, then a user turn asking for the tool. A reply with no
 * text (thinking only, say) has nothing to replay, and two user turns in a row are no valid
 * conversation, so the ask joins the last user turn as one more text block.
 */
function askForTool(messages: readonly MessageParam[], text: string, toolName: string): MessageParam[] {
  if (text !== '') {
    return [
      ...messages,
      { role: 'assistant', content: text },
      {
        role: 'user',
        content: `You answered without calling the tool "${toolName}". Call it now, with your answer as its input.`,
      },
    ];
  }
  const ask = `Answer by calling the tool "${toolName}" now, with your answer as its input.`;
  const last = messages.at(-1);
  if (last?.role !== 'user') return [...messages, { role: 'user', content: ask }];
  const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
  return [...messages.slice(0, -1), { role: 'user', content: [...content, { type: 'text', text: ask }] }];
}

/**
 * The tool call replayed as the model made it, answered by an error result carrying `feedback`.
 * A replayed `tool_use.input` must be an object (the pre-send check refuses anything else, and so
 * would the service), so an input the model wrote as `null`, a string or an array goes back as
 * `{}`, as the folder does with JSON that does not parse; the feedback quotes what it wrote, so
 * the model still sees its mistake.
 */
export function replayWithError(request: MessageRequest, toolUse: ToolUseBlock, feedback: string): MessageRequest {
  const written: unknown = toolUse.input;
  const isObject = typeof written === 'object' && written !== null && !Array.isArray(written);
  const input = isObject ? toolUse.input : {};
  const content = isObject
    ? feedback
    : `${feedback} (The input you wrote was ${quoted(written)}, not an object; it is replayed above as {}.)`;
  const call: MessageParam = {
    role: 'assistant',
    content: [{ type: 'tool_use', id: toolUse.id, name: toolUse.name, input }],
  };
  const result: MessageParam = {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: toolUse.id, is_error: true, content }],
  };
  return { ...request, messages: [...request.messages, call, result] };
}

/** A value as JSON, cut like the folder's unparsed input (200 characters): enough to recognise, no prompt growth. */
function quoted(value: unknown): string {
  return (JSON.stringify(value) ?? String(value)).slice(0, 200);
}
