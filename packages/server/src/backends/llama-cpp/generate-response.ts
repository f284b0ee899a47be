/**
 * One generation on one context sequence, streamed as part batches: node-llama-cpp's callbacks
 * push into a queue that this generator drains while the generation runs. Calls the model opens
 * in its chat format go through template-calls.ts, each input under its tool's grammar. At its
 * end, every schema-bound output goes through the one output check (call/output-check.ts).
 */
import {
  LlamaChat,
  LlamaText,
  type ChatHistoryItem,
  type ChatWrapper,
  type LlamaChatResponseChunk,
  type LlamaContextSequence,
  type LlamaGrammar,
} from 'node-llama-cpp';
import { ServiceError, type StopReason } from '@model-messages/protocol';
import type { StreamPart } from '../../streaming/stream-part.js';
import type { ModelCall, OfferedTool } from '../call/model-call.js';
import { ANSWER_SUBJECT, checkFormatAnswer, settleOutput, type Regenerated } from '../call/output-check.js';
import { notOfferedError } from '../call/tool-calls.js';
import { AsyncQueue } from './async-queue.js';
import { settleInput, type InputSettling } from './call-input.js';
import { callSyntax } from './call-syntax.js';
import { continuedChatWrapper } from './continued-chat-wrapper.js';
import type { GenerationPlan } from './generation-plan.js';
import { ResponseEmitter } from './response-emitter.js';
import { generateTemplateCalls, type CallingResponse, type ContinuedPhase } from './template-calls.js';

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
  /** The grammar of a tool's input (structured-output.ts), and whether it is exactly its schema. */
  inputGuide: (tool: OfferedTool) => Promise<{ grammar: LlamaGrammar; exact: boolean }>;
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
  const done = runGeneration(input, emitter, held).then(
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
      // Each callback's parts leave together; a finish part ends the step; a call's outcome
      // leaves at once, so that one the step then fails on is still counted.
      if (part.type === 'block-delta' || part.type === 'finish' || part.type === 'tool-call-outcome') {
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
  input: GenerationInput,
  emitter: ResponseEmitter,
  held: StreamPart[],
): Promise<StreamPart[]> {
  const { plan } = input;
  const continueTurn = (history: ChatHistoryItem[], tail: LlamaText, phase: ContinuedPhase | { kind: 'first' }) =>
    generate(input, history, continuedChatWrapper(input.chatWrapper, plan.functions, tail), phase, emitter);
  const first = await continueTurn(input.history, LlamaText([]), { kind: 'first' });
  if (!plan.functionNames || first.metadata.stopReason !== 'functionCalls')
    return finishParts(first, input, emitter, held);
  // The turn goes on after the history as the first generation left it: its text, not the call it opened.
  const history = withModelResponse(first.lastEvaluation.cleanHistory);
  const { last, called } = await generateTemplateCalls(first, {
    tools: input.call.tools,
    syntax: callSyntax(input.chatWrapper),
    chatWrapper: input.chatWrapper,
    emitter,
    settling: settlingOf(input),
    singleCall: input.call.singleCall,
    guideFor: input.inputGuide,
    continueTurn: (tail, phase) => continueTurn(history, tail, phase),
  });
  return finishParts(last, input, emitter, held, called);
}

/**
 * One LlamaChat generation of the step. The first and the free ones after a call (template-calls.ts)
 * are the model's own: its text, its thinking, stop sequences, calls opened (LlamaChat is given
 * the tools by name, so it stops once a call's name is written); the first is held to the main
 * output's grammar where there is one. An input phase writes one call's input under its grammar.
 */
async function generate(
  input: GenerationInput,
  history: ChatHistoryItem[],
  chatWrapper: ChatWrapper,
  phase: ContinuedPhase | { kind: 'first' },
  emitter: ResponseEmitter,
): Promise<CallingResponse> {
  const { sampling } = input.call;
  const { plan } = input;
  const chat = new LlamaChat({ contextSequence: input.sequence, chatWrapper, autoDisposeSequence: false });
  const grammar = phase.kind === 'input' ? phase.grammar : phase.kind === 'first' ? input.grammar : undefined;
  const free = phase.kind !== 'input';
  try {
    return (await chat.generateResponse(history, {
      maxTokens: input.outputBudget - input.spentTokens(),
      temperature: sampling.temperature ?? 1,
      topP: sampling.topP,
      topK: sampling.topK,
      seed: input.seed,
      signal: input.signal,
      // Stop sequences end text; a tool's input is JSON that a stop string (":", say) would cut.
      customStopTriggers:
        free && plan.main.kind === 'text' && sampling.stopSequences.length > 0 ? sampling.stopSequences : undefined,
      budgets: { thoughtTokens: free ? input.thoughtBudget : 0 },
      onResponseChunk: (chunk: LlamaChatResponseChunk) =>
        phase.kind === 'input' ? phase.input.chunk(chunk) : emitter.chunk(chunk),
      ...(grammar ? { grammar } : {}),
      ...(free && plan.functionNames
        ? { functions: plan.functionNames, documentFunctionParams: true, maxParallelFunctionCalls: 1 }
        : {}),
    } as never)) as CallingResponse;
  } finally {
    // The sequence is free again for the next generation of the step, and for the next request.
    chat.dispose();
  }
}

/**
 * The history to go on from: a model response that is empty is given an empty text, so that a
 * chat format that opens a thought at the start of a response (node-llama-cpp's
 * `openOnResponseStart`) does not open one before what the turn wrote since.
 */
function withModelResponse(history: ChatHistoryItem[]): ChatHistoryItem[] {
  const last = history.at(-1);
  if (last?.type !== 'model' || last.response.length > 0) return history;
  return [...history.slice(0, -1), { ...last, response: [''] }];
}

function settlingOf(input: GenerationInput): InputSettling {
  return { remaining: () => remaining(input), regenerateInput: input.regenerateInput };
}

/**
 * Exported for tests: the end of a generation, from the engine's response to the final parts
 * (the held ones, or what replaced them, then usage and the finish). Usage comes last, so a
 * fallback list (which commits to a backend at its first output) still moves on from a failure
 * before any output. `called`: the model's own calls already became blocks (template-calls.ts).
 */
export async function finishParts(
  response: CallingResponse,
  input: GenerationInput,
  emitter: ResponseEmitter,
  held: StreamPart[] = [],
  called = false,
): Promise<StreamPart[]> {
  const { plan } = input;
  const truncated = response.metadata.stopReason === 'maxTokens';
  if (plan.main.kind === 'tool') {
    emitter.ensureMainBlock();
    // A forced tool's input streamed as it came, under its grammar: it can only be checked now.
    if (!truncated) {
      const { outcome } = await settleInput(plan.main.tool, response.response, false, settlingOf(input), emitter);
      emitter.outcome(outcome);
    }
  }
  called ||= plan.main.kind === 'tool';
  // Before the block closes: a streamed envelope's outcome comes before its block-stop.
  if (plan.main.kind === 'envelope') called = await settleEnvelope(response, input, emitter, truncated);
  emitter.close();
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
 * The envelope's call (one of several tools): one that streamed is checked once whole; a held one
 * is checked, generated again if it fails, and then becomes its block; one cut by max_tokens is
 * kept as far as it came, unchecked. Answers whether a whole call was made.
 */
async function settleEnvelope(
  response: CallingResponse,
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
    emitter.outcome((await settleInput(call.tool, call.inputJson, false, settlingOf(input), emitter)).outcome);
    return true;
  }
  const { tool, inputJson } = envelopeCall(response.response, input.call.tools);
  const { value, outcome } = await settleInput(tool, inputJson, true, settlingOf(input), emitter);
  emitter.toolCall(tool, JSON.stringify(value), outcome);
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
  response: CallingResponse,
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
