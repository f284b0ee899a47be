/**
 * Builds the model call (backends/call/model-call.ts) from the validated request: the prompt once
 * per request, then each step's call from it. The only place besides the turn loop that reads the
 * wire request on behalf of a backend; the routes and the turn loop import it, a backend never
 * does (issue 33: the layering test keeps backends/ off this folder).
 */
import {
  requestThinks,
  type ContentBlock,
  type Effort,
  type ConversationRequest,
  type MessageRequest,
  type ModelProfile,
} from '@model-messages/protocol';
import { withoutClientMetadata } from './client-metadata.js';
import { conversationTurns, systemTextParts, withTurnSoFar } from './conversation.js';
import type { ModelCall, ModelPrompt } from '../backends/call/model-call.js';
import { outputTarget } from './output-target.js';
import { toolTable, withToolsFound } from './tool-table.js';

/**
 * The prompt as the request gives it: a compacted conversation from its compaction block on,
 * before any `context_management` edit, which context-management.ts applies to it.
 */
export function buildModelPrompt(request: ConversationRequest, model: ModelProfile): ModelPrompt {
  const tools = toolTable(request);
  const choice = request.tool_choice;
  const thinking = request.thinking;
  return {
    model,
    system: withoutClientMetadata(systemTextParts(request.system)),
    turns: conversationTurns(request.messages),
    tools,
    output: outputTarget(request, tools),
    singleCall: choice !== undefined && choice.type !== 'none' && choice.disable_parallel_tool_use === true,
    thinking: {
      on: requestThinks(request, model),
      budgetTokens: thinking?.type === 'enabled' ? thinking.budget_tokens : undefined,
      requested: thinking?.type,
      effort: turnEffort(request),
      display: thinking?.type === 'disabled' ? undefined : thinking?.display,
    },
  };
}

export interface StepSettings {
  /** Blocks this turn already produced in earlier steps (server tool calls and their results). */
  turnSoFar: readonly ContentBlock[];
  step: number;
  outputBudget: number;
  fault: string | undefined;
}

/**
 * Each field named rather than `...prompt` spread: a spread whose later field overrides one it
 * copied cost V8 about 18 µs a call here, the largest single cost of a scripted reply.
 */
export function buildStepCall(prompt: ModelPrompt, request: MessageRequest, settings: StepSettings): ModelCall {
  return {
    model: prompt.model,
    system: prompt.system,
    turns: withTurnSoFar(prompt.turns, settings.turnSoFar),
    // Tools that a tool search of this turn found are offered from the next step on (issue 34).
    tools: withToolsFound(prompt.tools, request, settings.turnSoFar),
    output: prompt.output,
    singleCall: prompt.singleCall,
    thinking: prompt.thinking,
    step: settings.step,
    outputBudget: settings.outputBudget,
    sampling: {
      temperature: request.temperature,
      topP: request.top_p,
      topK: request.top_k,
      stopSequences: request.stop_sequences ?? [],
    },
    streamed: request.stream === true,
    passOn: { metadata: request.metadata, serviceTier: request.service_tier },
    fault: settings.fault,
  };
}

/**
 * The effort of the turn the model writes: the last system message that sets one (the public
 * API's per-turn control: it holds from there on), else the request's own.
 */
function turnEffort(request: ConversationRequest): Effort | undefined {
  const messages = request.messages;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if (message.role === 'system' && message.output_config?.effort !== undefined) return message.output_config.effort;
  }
  return request.output_config?.effort;
}
