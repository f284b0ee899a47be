/**
 * The turn loop (no HTTP here): backend step -> if the model asked for server tools, run them
 * and append their result blocks -> step again; stop on end of turn, a client tool call, the
 * output budget, or the step bound (then `pause_turn`). Whatever ends the turn, every server
 * call in it has its result block, so the turn can always be sent back. Each step's parts are
 * read by a StepReader (step-reader.ts), which also enforces `disable_parallel_tool_use`.
 */
import {
  isCustomTool,
  ServiceError,
  type ContentBlock,
  type MessageRequest,
  type ModelProfile,
  type ServerToolResultBlock,
  type ServerToolUse,
  type ServerToolUseBlock,
} from '@model-messages/protocol';
import type { Backend } from '../backends/backend.js';
import { buildStepCall } from '../call-builder/build-model-call.js';
import type { CompactionPlan } from '../call-builder/context-management.js';
import type { ModelPrompt } from '../backends/call/model-call.js';
import type { Cancellation } from '../backends/cancellation.js';
import type { RequestRecord } from '../observability/request-record.js';
import { endEngineSpan, startEngineSpan } from '../observability/tracing.js';
import { ServerCallSigner } from '../signing/server-call-signing.js';
import type { Signer } from '../signing/signer.js';
import type { StreamPart } from '../streaming/stream-part.js';
import { isErrorContent } from '../tool-kinds/result-values.js';
import { noServerToolUse, serverToolKind } from '../tool-kinds/server-tool-kinds.js';
import { compactConversation } from './compaction-step.js';
import { ContextBudget } from './context-budget.js';
import { isRefusal, serverToolError, serverToolRefusal, type ServerToolRunner } from './server-tool-runner.js';
import { StepReader } from './step-reader.js';

export interface TurnOptions {
  backend: Backend;
  request: MessageRequest;
  /** The request's prompt as the model sees it, built once; each step continues it with the turn so far. */
  prompt: ModelPrompt;
  model: ModelProfile;
  fault: string | undefined;
  maxSteps: number;
  serverTools: ServerToolRunner;
  /** The prompt's tokens: the window's headroom for tool results starts after them. */
  inputTokens: number;
  /** Set when the prompt reached compaction's trigger: the turn writes the summary first (issue 34). */
  compaction?: CompactionPlan;
  cancellation: Cancellation;
  /** Signs the turn's thinking blocks and server call ids (step-reader.ts). */
  signer: Signer;
  /**
   * The request's record: its server tool calls are counted there, and each step gets a span
   * under the request's (observability/). A turn run on its own (tests, benchmarks) has none.
   */
  record?: RequestRecord;
}

interface TurnState {
  blocks: ContentBlock[];
  outputTokens: number;
  /** usage.server_tool_use so far: the calls that brought back a result, by their tools' counters. */
  serverToolUse: ServerToolUse;
  /**
   * Calls per server tool name in this request that made or started a request, for `max_uses`
   * and the context budget's calls left; a call refused before any request is not one of them.
   */
  uses: Map<string, number>;
  /**
   * Results of calls made by code in the sandbox: they never enter the turn, but URLs found by
   * a nested search are fetchable by a later nested fetch (url_not_in_prior_context).
   */
  sandboxResults: ServerToolResultBlock[];
  /** The input headroom left for tool results appended to the turn. */
  budget: ContextBudget;
}

export async function* runTurn(options: TurnOptions): AsyncGenerator<StreamPart[]> {
  const blocks: ContentBlock[] = [];
  let prompt = options.prompt;
  let inputTokens = options.inputTokens;
  if (options.compaction) {
    const compacted = await compactConversation({ ...options, plan: options.compaction });
    blocks.push(compacted.block);
    ({ prompt, inputTokens } = compacted);
    // `pause_after_compaction`: the reply is the compaction block alone; sent back, the next
    // request goes on from the summary (a failed compaction does not pause: nothing to go on from).
    if (options.compaction.pauseAfter && compacted.block.content !== null) {
      yield [...compacted.parts, { type: 'finish', stopReason: 'compaction', stopSequence: null }];
      return;
    }
    yield compacted.parts;
  }
  const budget = new ContextBudget(
    options.request,
    inputTokens,
    options.model.contextWindow,
    options.backend.countsTokensInProcess === true ? (turnSoFar) => countTurn(options, prompt, turnSoFar) : undefined,
  );
  // Digested only once a step makes server calls to sign: it reads the whole conversation (a
  // Claude Code prompt's 50 KB and more), and most turns make none.
  let callSigner: ServerCallSigner | undefined;
  const state: TurnState = {
    blocks,
    outputTokens: 0,
    serverToolUse: noServerToolUse(),
    uses: new Map(),
    sandboxResults: [],
    budget,
  };
  for (let step = 0; step < options.maxSteps; step += 1) {
    const reader = new StepReader(options.request, state, step, options.signer);
    const outputBudget = options.request.max_tokens - state.outputTokens;
    if (outputBudget < 1) {
      reader.endWithoutOutput();
    } else {
      const call = buildStepCall(prompt, options.request, {
        turnSoFar: state.blocks,
        step,
        outputBudget,
        fault: options.fault,
      });
      const span = startEngineSpan(options.record, options.model.id, call, step === 0 ? inputTokens : undefined);
      const tokensBefore = state.outputTokens;
      let failure: unknown;
      try {
        const batches = options.backend.stream(call, options.cancellation);
        for await (const batch of batches) {
          const passed = reader.read(batch);
          // Leaving the loop ends the backend's generator, which stops its generation.
          if (reader.outcome) break;
          yield passed;
        }
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        if (span) {
          const stepTokens = state.outputTokens - tokensBefore;
          endEngineSpan(span, options.backend, options.model.id, reader.outcome?.stopReason, stepTokens, failure);
        }
      }
    }
    const outcome = reader.outcome;
    if (!outcome) throw new Error(`backend ${options.backend.name} ended a step without a finish part`);
    const calls = outcome.stepBlocks.filter((block): block is ServerToolUseBlock => block.type === 'server_tool_use');
    // The step's last batch travels with the turn's finish, unless server results come between.
    let held = outcome.tail;
    if (calls.length > 0) {
      if (held.length > 0) yield held;
      held = [];
      // Server calls are answered whatever ended the step, even a client tool call or the output
      // budget: the turn goes back to the client complete, because a request must carry every
      // server call's result (protocol/src/tool-pairing.ts) and the client cannot write one.
      const results = await runServerTools(calls, options, state, outcome.cutCalls);
      // Each call's id covers its result (issue 32): the step's parts from its first call on
      // were held until now, and go out with the ids signed, followed by the results.
      const provisional = calls.map((call) => call.id);
      callSigner ??= new ServerCallSigner(options.signer, options.request.messages);
      callSigner.sign(state.blocks, calls, results);
      yield withSignedIds(outcome.held, provisional, calls);
      yield [
        ...results.flatMap((result): StreamPart[] => [{ type: 'block-start', block: result }, { type: 'block-stop' }]),
        { type: 'server-tool-usage', usage: { ...state.serverToolUse } },
      ];
      // Server calls only: their results go back to the model in the next step.
      if (outcome.stopReason === 'tool_use' && !outcome.stepBlocks.some((block) => block.type === 'tool_use')) continue;
    }
    yield [...held, { type: 'finish', stopReason: outcome.stopReason, stopSequence: outcome.stopSequence }];
    return;
  }
  yield [{ type: 'finish', stopReason: 'pause_turn', stopSequence: null }];
}

/**
 * The request's prompt continued by `turnSoFar`, as the backend counts it: what the turn, paused
 * and sent back, will be counted as (agent/context-budget.ts). A prompt the backend refuses to
 * count whole, past its context, is Infinity.
 */
async function countTurn(
  options: TurnOptions,
  turnPrompt: ModelPrompt,
  turnSoFar: readonly ContentBlock[],
): Promise<number> {
  const prompt = buildStepCall(turnPrompt, options.request, {
    turnSoFar,
    step: 0,
    outputBudget: 1,
    fault: undefined,
  });
  try {
    return await options.backend.countTokens(prompt, 'exact');
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'prompt_too_long') return Number.POSITIVE_INFINITY;
    throw error;
  }
}

/** Runs a step's server calls in order, each result appended to the turn; answers the results in the calls' order. */
async function runServerTools(
  calls: readonly ServerToolUseBlock[],
  options: TurnOptions,
  state: TurnState,
  cutCalls: ReadonlySet<ContentBlock>,
): Promise<ServerToolResultBlock[]> {
  const results: ServerToolResultBlock[] = [];
  for (const call of calls) {
    const result = cutCalls.has(call)
      ? await state.budget.take(serverToolError(call, 'invalid_tool_input'), 0, undefined, state)
      : await runServerTool(call, 'direct', options, state);
    state.blocks.push(result);
    results.push(result);
  }
  return results;
}

/** The held parts of a step, each server call's block-start with its signed id in place of its provisional one. */
function withSignedIds(
  held: readonly StreamPart[],
  provisional: readonly string[],
  calls: readonly ServerToolUseBlock[],
): StreamPart[] {
  return held.map((part) => {
    if (part.type !== 'block-start' || part.block.type !== 'server_tool_use') return part;
    const call = calls[provisional.indexOf(part.block.id)];
    return call === undefined ? part : { type: 'block-start', block: { ...part.block, id: call.id } };
  });
}

/** Who made a server call: the model (`direct`), or code in the sandbox through a host function. */
type Caller = 'direct' | 'code';

/**
 * Runs one server call, from the model or (nested) from code in the sandbox. `max_uses` is
 * counted per request; past it the call gets the error block and the model goes on.
 */
async function runServerTool(
  call: ServerToolUseBlock,
  caller: Caller,
  options: TurnOptions,
  state: TurnState,
  signal = options.cancellation.signal,
): Promise<ServerToolResultBlock> {
  const resultCharacters = state.budget.share(call.name, state.uses);
  let result = await dispatchServerTool(call, caller, options, state, resultCharacters, signal);
  // A result appended to the turn is taken out of its headroom (cut to its share where the
  // backend counts tokens); results of code's own calls reach only the code.
  if (caller === 'direct') {
    const tools = options.serverTools;
    result = await state.budget.take(result, resultCharacters, tools.fit?.bind(tools), state);
  }
  // usage.server_tool_use counts the calls that brought back a result: an error block is not
  // counted, whether it was refused before any request or its request failed.
  const madeRequest = !isErrorContent(result.content);
  options.record?.serverToolCall(call.name, madeRequest ? 'ok' : errorCodeOf(result.content));
  const counter = serverToolKind(call.name)?.usageCounter;
  if (madeRequest && counter !== undefined) state.serverToolUse[counter] += 1;
  return result;
}

async function dispatchServerTool(
  call: ServerToolUseBlock,
  caller: Caller,
  options: TurnOptions,
  state: TurnState,
  resultCharacters: number,
  signal: AbortSignal,
): Promise<ServerToolResultBlock> {
  const tool = (options.request.tools ?? []).find(
    (candidate) => candidate.name === call.name && !isCustomTool(candidate),
  );
  if (!tool) return serverToolRefusal(call, 'unavailable');
  // allowed_callers without "direct" keeps the tool for code in the sandbox, as one without the
  // code execution tool keeps it from code (host-functions.ts). The model calling it anyway is
  // refused with invalid_tool_input, the public code for a call the tool does not take as it
  // was made: unavailable would read as a passing failure worth retrying, max_uses_exceeded as
  // a limit used up, and url_not_allowed exists for web fetch alone.
  if (
    caller === 'direct' &&
    'allowed_callers' in tool &&
    tool.allowed_callers !== undefined &&
    !tool.allowed_callers.includes('direct')
  )
    return serverToolRefusal(call, 'invalid_tool_input');
  const used = state.uses.get(call.name) ?? 0;
  if ('max_uses' in tool && tool.max_uses !== undefined && used >= tool.max_uses)
    return serverToolRefusal(call, 'max_uses_exceeded');
  // Counted before the call runs, so that calls from code running at once cannot all pass the
  // check above; given back when the tool refused the call without making a request (bad input,
  // a URL not given, no room in the budget), which max_uses does not limit.
  state.uses.set(call.name, used + 1);
  let nested = 0;
  const result = await options.serverTools.run(call, {
    request: options.request,
    turnSoFar: state.sandboxResults.length === 0 ? state.blocks : [...state.blocks, ...state.sandboxResults],
    resultCharacters,
    signal,
    callServerTool: async (name, input, callSignal) => {
      nested += 1;
      const nestedSignal = callSignal ? AbortSignal.any([signal, callSignal]) : signal;
      const result = await runServerTool(
        { type: 'server_tool_use', id: `${call.id}_${nested}`, name, input },
        'code',
        options,
        state,
        nestedSignal,
      );
      state.sandboxResults.push(result);
      return result;
    },
  });
  if (isRefusal(result)) state.uses.set(call.name, (state.uses.get(call.name) ?? 1) - 1);
  return result;
}

/** The `error_code` of an error result block, for the metrics: a code of the tool's table, never text. */
function errorCodeOf(content: unknown): string {
  const code = (content as { error_code?: unknown }).error_code;
  return typeof code === 'string' ? code : 'error';
}
