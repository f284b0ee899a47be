/**
 * One generation on one context sequence, streamed as part batches: node-llama-cpp's callbacks
 * push into a queue that this generator drains while the generation runs. At its end, every
 * schema-bound output goes through the one output check (call/output-check.ts).
 */
import {
  LlamaChat,
  type ChatHistoryItem,
  type ChatModelFunctions,
  type ChatWrapper,
  type LlamaChatResponse,
  type LlamaChatResponseChunk,
  type LlamaChatResponseFunctionCallParamsChunk,
  type LlamaContextSequence,
  type LlamaGrammar,
} from 'node-llama-cpp';
import { ServiceError, type StopReason } from '@model-messages/protocol';
import type { StreamPart } from '../../streaming/stream-part.js';
import type { ModelCall, OfferedTool } from '../call/model-call.js';
import {
  ANSWER_SUBJECT,
  checkFormatAnswer,
  checkToolInput,
  checkToolValue,
  settleOutput,
  toolInputSubject,
  type Checked,
  type Regenerated,
} from '../call/output-check.js';
import { notOfferedError } from '../call/tool-calls.js';
import { AsyncQueue } from './async-queue.js';
import { FunctionCallStream } from './function-call-stream.js';
import type { GenerationPlan } from './generation-plan.js';
import { ResponseEmitter } from './response-emitter.js';

export interface GenerationInput {
  sequence: LlamaContextSequence;
  chatWrapper: ChatWrapper;
  history: ChatHistoryItem[];
  plan: GenerationPlan;
  grammar: LlamaGrammar | undefined;
  /** The grammar is the schema's own (structured-output.ts): what it guides is valid by construction. */
  exactGrammar: boolean;
  call: Pick<ModelCall, 'tools' | 'sampling' | 'singleCall'>;
  /** What the whole step may spend, second passes included. */
  outputBudget: number;
  thoughtBudget: number;
  seed: number;
  signal: AbortSignal;
  /**
   * The prompt's split into evaluated, reused and marked tokens (loaded-model.ts), known before
   * the first output token: reported with the first output, so that a stream its client cuts is
   * recorded with it too (issue 32), and again with the finish.
   */
  inputTokens: Extract<StreamPart, { type: 'input-tokens' }>;
  /**
   * Output tokens the step has spent so far, second passes included: the sequence's meter, which
   * counts every sampled token, control tokens with no text too, which the chunks do not show.
   */
  spentTokens: () => number;
  /** A tool's input once more, as a forced call under its grammar, after a call's input failed. */
  regenerateInput: (tool: OfferedTool, maxTokens: number) => Promise<Regenerated>;
  /** A held format answer once more, after `answer` failed with `violation`. */
  retryFormat: (answer: string, violation: string, maxTokens: number) => Promise<Regenerated>;
}

export async function* generateResponse(input: GenerationInput): AsyncGenerator<StreamPart[]> {
  const queue = new AsyncQueue<StreamPart>();
  // A held answer's parts wait here until it passed its check, so a failure can be asked for again unseen.
  const held: StreamPart[] = [];
  const holdFormat = holdsFormat(input);
  let promptReported = false;
  const emitter = new ResponseEmitter(
    (part) => {
      if (holdFormat) held.push(part);
      else {
        // With the first output, never alone: a fallback list commits to a backend at its first
        // output, and must still move on from a failure before it.
        if (!promptReported) queue.push(input.inputTokens);
        promptReported = true;
        queue.push(part);
      }
    },
    input.plan.main,
    input.exactGrammar,
  );
  const calls = new FunctionCallStream(emitter, input.call.tools);
  const chat = new LlamaChat({
    contextSequence: input.sequence,
    chatWrapper: input.chatWrapper,
    autoDisposeSequence: false,
  });
  const done = runGeneration(chat, input, emitter, calls, held).then(
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

/** Only the format schema's own grammar makes a format answer valid as it streams. */
function holdsFormat(input: Pick<GenerationInput, 'plan' | 'exactGrammar'>): boolean {
  return input.plan.format !== undefined && !input.exactGrammar;
}

async function runGeneration(
  chat: LlamaChat,
  input: GenerationInput,
  emitter: ResponseEmitter,
  calls: FunctionCallStream,
  held: StreamPart[],
): Promise<StreamPart[]> {
  const { sampling } = input.call;
  const plan = input.plan;
  let response: LlamaChatResponse;
  try {
    response = await chat.generateResponse(input.history, {
      maxTokens: input.outputBudget,
      temperature: sampling.temperature ?? 1,
      topP: sampling.topP,
      topK: sampling.topK,
      seed: input.seed,
      signal: input.signal,
      // Stop sequences end text; a tool's input is JSON that a stop string (":", say) would cut.
      customStopTriggers:
        plan.main.kind === 'text' && sampling.stopSequences.length > 0 ? sampling.stopSequences : undefined,
      budgets: { thoughtTokens: input.thoughtBudget },
      onResponseChunk: (chunk: LlamaChatResponseChunk) => emitter.chunk(chunk),
      ...(input.grammar ? { grammar: input.grammar } : {}),
      ...(plan.functions
        ? {
            functions: plan.functions,
            documentFunctionParams: true,
            maxParallelFunctionCalls: input.call.singleCall ? 1 : undefined,
            onFunctionCallParamsChunk: (chunk: LlamaChatResponseFunctionCallParamsChunk) => calls.paramsChunk(chunk),
          }
        : {}),
    } as never);
  } finally {
    // The sequence is free again for the second passes below, and for the next request.
    chat.dispose();
  }
  return finishParts(response, input, emitter, calls, held);
}

/**
 * Exported for tests: the end of a generation, from the engine's response to the final parts
 * (the held ones, or what replaced them, then usage and the finish). Usage comes last, so a
 * fallback list (which commits to a backend at its first output) still moves on from a failure
 * before any output.
 */
export async function finishParts(
  response: LlamaChatResponse,
  input: GenerationInput,
  emitter: ResponseEmitter,
  calls = new FunctionCallStream(emitter, input.call.tools),
  held: StreamPart[] = [],
): Promise<StreamPart[]> {
  const { plan } = input;
  const truncated = response.metadata.stopReason === 'maxTokens';
  if (plan.main.kind === 'tool') emitter.ensureMainBlock();
  emitter.close();
  // A forced tool's input streamed as it came, under its grammar: it can only be checked now.
  if (plan.main.kind === 'tool' && !truncated) await checkedInput(plan.main.tool, response.response, false, input);
  let called = plan.main.kind === 'tool';
  if (plan.main.kind === 'envelope') called = await settleEnvelope(response, input, emitter, truncated);
  const finished = (response as unknown as LlamaChatResponse<ChatModelFunctions>).functionCalls ?? [];
  for (const [index, call] of finished.entries()) {
    const tool = input.call.tools.find((candidate) => candidate.name === call.functionName);
    if (!tool) throw notOfferedError(call.functionName);
    // node-llama-cpp hands the input over parsed: checked as it is, since its JSON text would
    // already have turned a number out of the double range into null.
    const params: unknown = call.params ?? {};
    const streamed = calls.calls[index]?.streamed === true;
    const checked = await checkedInput(tool, JSON.stringify(params), !streamed, input, checkToolValue(params, tool));
    if (!streamed) emitter.toolCall(tool, JSON.stringify(checked));
    called = true;
  }
  // node-llama-cpp lists only the calls it finished: a held one that max_tokens cut is kept as
  // far as it came, unchecked, as every backend keeps a cut call (a streamed one is out already).
  const cut = truncated ? calls.calls[finished.length] : undefined;
  if (cut?.tool && !cut.streamed) emitter.toolCall(cut.tool, cut.json);
  let stop = stopOf(response, called, input.call.sampling.stopSequences);
  let parts = held;
  if (plan.format && stop.reason === 'end_turn') {
    const settled = await settleOutput(response.response, {
      check: (text) => checkFormatAnswer(text, plan.format!),
      subject: ANSWER_SUBJECT,
      where: plan.format.where,
      held: holdsFormat(input),
      remaining: () => remaining(input),
      regenerate: input.retryFormat,
    });
    if (settled.regenerated) parts = textBlock(settled.text);
    stop = { reason: settled.truncated ? 'max_tokens' : 'end_turn', sequence: null };
  }
  return [
    ...parts,
    input.inputTokens,
    { type: 'output-tokens', count: input.spentTokens() },
    { type: 'finish', stopReason: stop.reason, stopSequence: stop.sequence },
  ];
}

/**
 * A call's input through the one output check: held (a call parsed after generation), a failure
 * is generated again as a forced call under the tool's grammar, spending from the same step budget.
 */
async function checkedInput(
  tool: OfferedTool,
  json: string,
  held: boolean,
  input: GenerationInput,
  verdict?: Checked<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const settled = await settleOutput(
    json,
    {
      check: (text) => checkToolInput(text, tool),
      subject: toolInputSubject(tool.name),
      where: tool.where,
      held,
      remaining: () => remaining(input),
      regenerate: (_output, _violation, maxTokens) => input.regenerateInput(tool, maxTokens),
    },
    verdict,
  );
  if (settled.truncated) {
    throw new ServiceError(
      'model_output_invalid',
      `${toolInputSubject(tool.name)} was cut by max_tokens when it was generated again`,
    );
  }
  return settled.value;
}

/**
 * The envelope's call (one of several tools): one that streamed is checked once whole; a held one
 * is checked, generated again if it fails, and then becomes its block; one cut by max_tokens is
 * kept as far as it came, unchecked. Answers whether a whole call was made.
 */
async function settleEnvelope(
  response: LlamaChatResponse,
  input: GenerationInput,
  emitter: ResponseEmitter,
  truncated: boolean,
): Promise<boolean> {
  const call = emitter.envelopeCall();
  if (truncated) {
    if (call && !call.streamed) emitter.toolCall(call.tool, call.inputJson);
    return false;
  }
  if (call?.streamed) {
    await checkedInput(call.tool, call.inputJson, false, input);
    return true;
  }
  const { tool, inputJson } = envelopeCall(response.response, input.call.tools);
  emitter.toolCall(tool, JSON.stringify(await checkedInput(tool, inputJson, true, input)));
  return true;
}

/** `{"name": ..., "input": ...}` for one of several tools (call/output-instructions.ts toolEnvelopeSchema). */
function envelopeCall(text: string, tools: readonly OfferedTool[]): { tool: OfferedTool; inputJson: string } {
  let parsed: { name?: unknown; input?: unknown };
  try {
    parsed = JSON.parse(text) as { name?: unknown; input?: unknown };
  } catch (error) {
    throw new ServiceError('model_output_invalid', `the model's tool call is not JSON (${(error as Error).message})`);
  }
  const tool = tools.find((candidate) => candidate.name === parsed.name);
  if (!tool) throw notOfferedError(String(parsed.name));
  return { tool, inputJson: JSON.stringify(parsed.input ?? {}) };
}

function remaining(input: GenerationInput): number {
  return input.outputBudget - input.spentTokens();
}

function textBlock(text: string): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'block-start', block: { type: 'text', text: '', citations: null } }];
  if (text !== '') parts.push({ type: 'block-delta', delta: { type: 'text_delta', text } });
  parts.push({ type: 'block-stop' });
  return parts;
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
