/**
 * The request for the answer layer's one retry (spec: Client retry policy 2), or undefined when
 * no change to the request could help. A retry always changes the request:
 * - truncated: `max_tokens` doubled, capped by the model's limit and the context;
 * - declined: the model's text replayed as an assistant turn, a user turn asking for the tool,
 *   the tool still forced;
 * - invalid: the call replayed, answered by an error tool_result naming the validation error.
 */
import type { MessageParam, MessageRequest, ToolUseBlock } from '@mms/protocol';
import { doubledOutputBudget } from '../budgets.js';
import type { ResolvedModel } from '../client-options.js';
import type { AnswerOutcome } from './classify-answer.js';

export interface RetryPlan {
  request: MessageRequest;
  reason: string;
}

export interface RetryLimits {
  model: ResolvedModel;
  bufferTokens: number;
  /** `usage.input_tokens` of the truncated response: the prompt as the service counted it. */
  inputTokens: number;
}

export function answerRetry(request: MessageRequest, outcome: Exclude<AnswerOutcome, { kind: 'answer' }>, toolName: string, limits: RetryLimits): RetryPlan | undefined {
  switch (outcome.kind) {
    case 'truncated': {
      const next = doubledOutputBudget(request.max_tokens, { modelMaxOutputTokens: limits.model.maxOutputTokens, contextWindow: limits.model.keptWindow, inputTokens: limits.inputTokens, bufferTokens: limits.bufferTokens });
      if (next === undefined) return undefined;
      return { request: { ...request, max_tokens: next }, reason: `truncated at max_tokens ${request.max_tokens}; retrying with ${next}` };
    }
    case 'declined': {
      const replay: MessageParam[] = outcome.text === '' ? [] : [{ role: 'assistant', content: outcome.text }];
      const ask: MessageParam = { role: 'user', content: `You answered without calling the tool "${toolName}". Call it now, with your answer as its input.` };
      return { request: { ...request, messages: [...request.messages, ...replay, ask] }, reason: `the model did not call "${toolName}"` };
    }
    case 'invalid':
      return { request: replayWithError(request, outcome.toolUse, `The input failed validation: ${outcome.violation}. Call "${toolName}" again with input that satisfies its schema.`), reason: `the tool input is invalid: ${outcome.violation}` };
    default:
      return outcome satisfies never;
  }
}

/** The tool call replayed as the model made it, answered by an error result carrying `feedback`. */
export function replayWithError(request: MessageRequest, toolUse: ToolUseBlock, feedback: string): MessageRequest {
  const call: MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: toolUse.id, name: toolUse.name, input: toolUse.input }] };
  const result: MessageParam = { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, is_error: true, content: feedback }] };
  return { ...request, messages: [...request.messages, call, result] };
}
