/**
 * One generation on one context sequence, streamed as part batches: node-llama-cpp's callbacks
 * push into a queue that this generator drains while the generation runs.
 */
import {
  LlamaChat,
  type ChatHistoryItem,
  type ChatModelFunctions,
  type ChatWrapper,
  type LlamaChatResponse,
  type LlamaChatResponseChunk,
  type LlamaContextSequence,
  type LlamaGrammar,
} from 'node-llama-cpp';
import { isCustomTool, schemaViolation, ServiceError, type MessageRequest, type StopReason } from '@mms/protocol';
import type { StreamPart } from '../../streaming/stream-part.js';
import { AsyncQueue } from './async-queue.js';
import type { CollectedText } from './collect-text.js';
import { checkFormatAnswer } from './format-answer.js';
import type { GenerationPlan } from './generation-plan.js';
import { ResponseEmitter } from './response-emitter.js';
import { assertStrictOutput } from './structured-output.js';

export interface GenerationInput {
  sequence: LlamaContextSequence;
  chatWrapper: ChatWrapper;
  history: ChatHistoryItem[];
  plan: GenerationPlan;
  grammar: LlamaGrammar | undefined;
  /** The format answer is held back until checked: no grammar of its own schema guides it. */
  holdFormat: boolean;
  request: MessageRequest;
  /** What the whole step may spend, second passes included. */
  outputBudget: number;
  thoughtBudget: number;
  seed: number;
  signal: AbortSignal;
  /**
   * Output tokens the step has spent so far, second passes included: the sequence's meter, which
   * counts every sampled token, control tokens with no text too, which the chunks do not show.
   */
  spentTokens: () => number;
  /** Regenerates a strict tool's input under its grammar, when a free-form call got it wrong. */
  repairInput: (toolName: string, maxTokens: number) => Promise<Record<string, unknown>>;
  /** Asks for a held format answer once more, after `answer` failed with `violation`. */
  retryFormat: (answer: string, violation: string, maxTokens: number) => Promise<CollectedText>;
}

export async function* generateResponse(input: GenerationInput): AsyncGenerator<StreamPart[]> {
  const queue = new AsyncQueue<StreamPart>();
  // A held answer's parts wait here until it passed its check, so a failure can be asked for again unseen.
  const held: StreamPart[] = [];
  const emitter = new ResponseEmitter(
    (part) => (input.holdFormat ? held.push(part) : queue.push(part)),
    input.plan.main,
  );
  const chat = new LlamaChat({
    contextSequence: input.sequence,
    chatWrapper: input.chatWrapper,
    autoDisposeSequence: false,
  });
  const done = runGeneration(chat, input, emitter, held).then(
    (parts) => {
      parts.forEach((part) => queue.push(part));
      queue.end();
    },
    (error: unknown) => queue.fail(error),
  );
  try {
    let batch: StreamPart[] = [];
    for await (const part of queue) {
      batch.push(part);
      // Each callback's parts leave together; a finish part ends the step.
      if (part.type === 'block-delta' || part.type === 'finish') {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    await done;
  }
}

async function runGeneration(
  chat: LlamaChat,
  input: GenerationInput,
  emitter: ResponseEmitter,
  held: StreamPart[],
): Promise<StreamPart[]> {
  const { request, plan } = input;
  let response: LlamaChatResponse;
  try {
    response = await chat.generateResponse(input.history, {
      maxTokens: input.outputBudget,
      temperature: request.temperature ?? 1,
      topP: request.top_p,
      topK: request.top_k,
      seed: input.seed,
      signal: input.signal,
      // Stop sequences end text; a forced tool's input is JSON that a stop string (":", say) would cut.
      customStopTriggers: plan.main.kind === 'text' ? request.stop_sequences : undefined,
      budgets: { thoughtTokens: input.thoughtBudget },
      onResponseChunk: (chunk: LlamaChatResponseChunk) => emitter.chunk(chunk),
      ...(input.grammar ? { grammar: input.grammar } : {}),
      ...(plan.functions
        ? {
            functions: plan.functions,
            documentFunctionParams: true,
            maxParallelFunctionCalls: plan.singleCall ? 1 : undefined,
          }
        : {}),
    } as never);
  } finally {
    // The sequence is free again for the second passes below, and for the next request.
    chat.dispose();
  }
  return finishParts(response, input, emitter, held);
}

/**
 * Exported for tests: the end of a generation, from the engine's response to the final parts
 * (the held ones, or what replaced them, then usage and the finish).
 */
export async function finishParts(
  response: LlamaChatResponse,
  input: GenerationInput,
  emitter: ResponseEmitter,
  held: StreamPart[] = [],
): Promise<StreamPart[]> {
  const { plan } = input;
  const truncated = response.metadata.stopReason === 'maxTokens';
  if (plan.main.kind === 'tool') emitter.ensureMainBlock();
  emitter.close();
  if (plan.main.kind === 'tool' && plan.structured?.strict && !truncated)
    assertStrictOutput(response.response, plan.structured);
  const calls = (response as unknown as LlamaChatResponse<ChatModelFunctions>).functionCalls ?? [];
  for (const call of calls)
    emitter.toolCall(call.functionName, await checkedCallInput(call.functionName, call.params, input));
  let stop = stopOf(response, plan.main.kind === 'tool' || calls.length > 0, input.request.stop_sequences ?? []);
  let parts = held;
  if (plan.format && stop.reason === 'end_turn') {
    const outcome = await checkFormatAnswer(response.response, {
      target: plan.format,
      held: input.holdFormat,
      remaining: () => input.outputBudget - input.spentTokens(),
      retry: input.retryFormat,
    });
    if (outcome.replacement) parts = outcome.replacement;
    stop = { reason: outcome.stopReason, sequence: null };
  }
  return [
    ...parts,
    { type: 'output-tokens', count: input.spentTokens() },
    { type: 'finish', stopReason: stop.reason, stopSequence: stop.sequence },
  ];
}

/**
 * node-llama-cpp parses a free-form call's input with its own grammar, which does not cover
 * every strict keyword; a strict tool's input that fails its schema is generated again under our
 * grammar. A non-strict tool's input is passed on as the model wrote it.
 */
async function checkedCallInput(
  name: string,
  params: unknown,
  input: GenerationInput,
): Promise<Record<string, unknown>> {
  const value =
    params !== null && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
  const tool = (input.request.tools ?? []).filter(isCustomTool).find((candidate) => candidate.name === name);
  if (!tool || tool.strict !== true) return value;
  const violation = schemaViolation(tool.input_schema, value);
  if (violation === undefined) return value;
  // The repair spends from the same step budget: usage counts it, and the step stays within max_tokens.
  const remaining = input.outputBudget - input.spentTokens();
  if (remaining <= 0)
    throw new ServiceError(
      'model_output_invalid',
      `the model's input for the tool "${name}" failed its input_schema, and no output tokens are left to generate it again: ${violation}`,
    );
  return input.repairInput(name, remaining);
}

function stopOf(
  response: LlamaChatResponse,
  calledTool: boolean,
  stopSequences: readonly string[],
): { reason: StopReason; sequence: string | null } {
  const metadata = response.metadata;
  switch (metadata.stopReason) {
    case 'maxTokens':
      return { reason: 'max_tokens', sequence: null };
    case 'customStopTrigger': {
      const trigger = metadata.customStopTrigger.filter((piece): piece is string => typeof piece === 'string').join('');
      return { reason: 'stop_sequence', sequence: stopSequences.find((sequence) => sequence === trigger) ?? trigger };
    }
    case 'abort':
      throw new ServiceError('internal', 'generation aborted');
    default:
      return { reason: calledTool ? 'tool_use' : 'end_turn', sequence: null };
  }
}
