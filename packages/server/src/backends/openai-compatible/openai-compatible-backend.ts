/**
 * A model served by an engine's OpenAI-compatible chat completions API (vLLM, SGLang,
 * llama.cpp server, Ollama, or any other): mms stays a stateless front that keeps every rule
 * of the contract. Each step is one streamed engine request; its chunks become parts as they
 * arrive. Output the engine cannot guide to a schema is checked here: a call's input that fails
 * (a strict tool's against its schema; any call's when it does not parse or misses a required
 * field, issue 35) is repaired once, the engine asked for that input alone under its
 * structured-output option; an `output_config.format` answer that fails is asked for once more;
 * and a second failure is a clear error of its own kind (`model_output_invalid`): the engine
 * worked, so a fallback list neither moves on nor charges its circuit for what one sample of the
 * model wrote. Calls the model left in its text are taken out of it (leaked-calls/).
 */
import { ServiceError } from '@model-messages/protocol';
import type { Backend, BackendReadiness, TokenCountPurpose } from '../backend.js';
import type { BackendContext } from '../backend-kind.js';
import type { Cancellation } from '../cancellation.js';
import type { ModelCall, ModelPrompt, OfferedTool } from '../call/model-call.js';
import {
  ANSWER_SUBJECT,
  checkFormatAnswer,
  checkToolInput,
  checkToolValue,
  inputRetryNote,
  settleOutput,
  toolInputSubject,
  type Checked,
  type OutputCheck,
} from '../call/output-check.js';
import { notOfferedError, toolCallBlock } from '../call/tool-calls.js';
import { answeredReadiness, PROBE_TIMEOUT_MS, ReadinessProbe, unreachable } from '../readiness-probe.js';
import type { BackendReport } from '../backend-events.js';
import type { StreamPart, ToolCallOutcome } from '../../streaming/stream-part.js';
import { toChatRequest } from './chat-request.js';
import type { ChatCompletionRequest, ChatMessage } from './chat-types.js';
import {
  ChunkConverter,
  type CallOrigin,
  type ChunkSummary,
  type OpenCall,
  type PendingCall,
} from './chunk-conversion.js';
import { EngineClient } from './engine-client.js';
import type { TextCallSyntax } from './leaked-calls/text-call.js';
import { textCallSyntaxes } from './leaked-calls/text-call-syntaxes.js';
import { ENGINE_PROFILES, type EngineProfile } from './engine-profiles.js';
import { formatRetryMessages, stopOf } from './finish-reason.js';
import type { OpenAiCompatibleBackendConfig } from './openai-compatible-config.js';
import { planChat, plannedTool, repairPlan, type ChatPlan } from './output-plan.js';
import { prepareEngine } from './prepare-engine.js';
import { PromptTokenCounter } from './prompt-token-counter.js';

/** How a held call that passed its check unrepaired became its block, by where it came from. */
const ORIGIN_OUTCOMES: Record<CallOrigin, ToolCallOutcome> = {
  engine: 'clean',
  text: 'recovered_from_text',
  // The engine ran it into the call before: split off, it was mended.
  'run-on': 'repaired',
};

interface Attempt {
  summary: ChunkSummary;
  sawDone: boolean;
}

/** What one step has spent so far, across its retries and repairs. */
interface StepState {
  call: ModelCall;
  plan: ChatPlan;
  outputTokens: number;
  cancellation: Cancellation;
}

export class OpenAiCompatibleBackend implements Backend {
  readonly name: string;
  readonly telemetryName: string;
  private readonly profile: EngineProfile;
  private readonly client: EngineClient;
  private readonly counter: PromptTokenCounter;
  /** GET <baseURL>/models, as the start-up check asks it, within the probe's short time limit. */
  private readonly probe: ReadinessProbe;
  private readonly report: BackendReport;
  /** The syntaxes in which a call the model left in its text is read (leaked-calls/). */
  private readonly textCallSyntaxes: readonly TextCallSyntax[];

  constructor(
    private readonly config: OpenAiCompatibleBackendConfig,
    options: Pick<BackendContext, 'warn' | 'report' | 'now' | 'modelLabel' | 'telemetryName'>,
  ) {
    this.name = `openai-compatible:${config.engine}`;
    this.telemetryName = options.telemetryName;
    this.profile = ENGINE_PROFILES[config.engine];
    this.report = options.report;
    this.textCallSyntaxes = textCallSyntaxes(config.textCallSyntaxes);
    const apiKey = config.apiKey ?? (config.apiKeyEnv ? process.env[config.apiKeyEnv] : undefined);
    this.client = new EngineClient({ ...config, apiKey, modelLabel: options.modelLabel });
    this.counter = new PromptTokenCounter({
      client: this.client,
      profile: this.profile,
      mode: config.countTokens,
      where: `${this.name} at ${config.baseURL}`,
      warn: options.warn ?? ((message) => this.report({ type: 'warning', message })),
      now: options.now ?? Date.now,
    });
    this.probe = new ReadinessProbe(
      () =>
        this.client.get(`${this.client.apiBase}/models`, PROBE_TIMEOUT_MS).then(
          (answer) => answeredReadiness(this.name, answer.status),
          () => unreachable(this.name),
        ),
      options.now,
    );
  }

  async *stream(call: ModelCall, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    const plan = planChat(call, this.profile);
    const state: StepState = { call, plan, outputTokens: 0, cancellation };
    let { summary, sawDone } = yield* this.attempt(
      this.chatRequest(state, plan, call.thinking.on, []),
      plan,
      call.thinking.on,
      state,
    );
    /** The engine's count of the prompt as the request sent it: the first attempt's, not a retry's. */
    const promptUsage = this.promptUsage(summary);
    let stop = stopOf(summary, call.sampling.stopSequences, sawDone, this.config.engine);
    const format = plan.formatCheck;
    if (format && stop.reason === 'end_turn') {
      // A held answer (nothing of it streamed) can be asked for again; the retry is held too.
      await settleOutput(summary.text, {
        check: (text) => checkFormatAnswer(text, format),
        subject: ANSWER_SUBJECT,
        where: format.where,
        held: plan.holdAll,
        remaining: () => this.remaining(state),
        regenerate: async (answer, violation) => {
          this.report({ type: 'regeneration', backend: this.name, output: 'format_answer' });
          const feedback = formatRetryMessages(answer, violation);
          ({ summary, sawDone } = await this.collect(
            this.chatRequest(state, plan, call.thinking.on, feedback),
            plan,
            call.thinking.on,
            state,
          ));
          stop = stopOf(summary, call.sampling.stopSequences, sawDone, this.config.engine);
          return { text: summary.text, truncated: stop.reason !== 'end_turn' };
        },
      });
    }
    const truncated = stop.reason === 'max_tokens';
    const parts = [...summary.tail];
    try {
      if (!truncated) parts.push(...(await this.checkStreamedCalls(summary, plan)));
      for (const item of summary.held) {
        if (item.type === 'pending-call') parts.push(...(await this.release(item, state, truncated)));
        else if (item.type === 'open-call') parts.push(...(await this.finishOpenCall(item, state)));
        else parts.push(item);
      }
    } catch (error) {
      if (!(error instanceof FailedCall)) throw error;
      // Counted before the 502: the call's outcome, none of the held output.
      yield [outcomeOf('failed')];
      throw error.error;
    }
    // The engine's figure replaces mms's up-front count (often an estimate) in the final usage.
    const finalPrompt = promptUsage ?? (await this.countedAfterwards(call));
    if (finalPrompt !== undefined) parts.push(finalPrompt);
    parts.push(
      { type: 'output-tokens', count: state.outputTokens },
      { type: 'finish', stopReason: stop.reason, stopSequence: stop.sequence },
    );
    yield parts;
  }

  async countTokens(prompt: ModelPrompt, purpose: TokenCountPurpose): Promise<number> {
    const body = toChatRequest({
      prompt,
      sampling: undefined,
      plan: planChat(prompt, this.profile),
      engine: this.config.engine,
      profile: this.profile,
      model: this.config.model,
      thinking: this.config.thinking,
      images: this.config.images,
      outputBudget: 1,
    });
    return this.counter.count(body, purpose, prompt.model.contextWindow);
  }

  prepare(): Promise<string> {
    return prepareEngine(this.client, this.config);
  }

  /** The engine loads its models itself. */
  async load(): Promise<void> {}

  async readiness(): Promise<BackendReadiness[]> {
    return [await this.probe.answer()];
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private chatRequest(
    state: StepState,
    plan: ChatPlan,
    thinks: boolean,
    extraMessages: ChatMessage[],
  ): ChatCompletionRequest {
    const { call } = state;
    return toChatRequest({
      prompt: thinks === call.thinking.on ? call : { ...call, thinking: { ...call.thinking, on: thinks } },
      sampling: call.sampling,
      plan,
      engine: this.config.engine,
      profile: this.profile,
      model: this.config.model,
      thinking: this.config.thinking,
      images: this.config.images,
      outputBudget: this.remaining(state),
      extraMessages,
      maxTokensField: this.config.maxTokensField,
      streamOptions: this.config.streamOptions,
    });
  }

  /** One engine request, its parts passed on as they come; stops early when mms matched a stop sequence. */
  private async *attempt(
    body: ChatCompletionRequest,
    plan: ChatPlan,
    thinks: boolean,
    state: StepState,
  ): AsyncGenerator<StreamPart[], Attempt> {
    const stopSequences = this.profile.stopReport ? [] : state.call.sampling.stopSequences;
    const converter = new ChunkConverter({
      engine: this.config.engine,
      plan,
      thinks,
      stopSequences,
      textCallSyntaxes: this.textCallSyntaxes,
    });
    const chunks = this.client.streamChat(body, state.cancellation);
    let sawDone = false;
    try {
      for (let next = await chunks.next(); ; next = await chunks.next()) {
        if (next.done) {
          sawDone = next.value.done;
          break;
        }
        const parts = converter.push(next.value);
        if (parts.length > 0) yield parts;
        // The rest is not wanted: leaving the loop closes the connection, which cancels the generation.
        if (converter.stopped) break;
      }
    } finally {
      await chunks.return({ done: false });
    }
    const summary = converter.end();
    state.outputTokens += summary.completionTokens ?? summary.outputChunks;
    return { summary, sawDone };
  }

  /** An attempt whose parts are all held (nothing of it is passed on as it comes), run to its end. */
  private async collect(
    body: ChatCompletionRequest,
    plan: ChatPlan,
    thinks: boolean,
    state: StepState,
  ): Promise<Attempt> {
    const run = this.attempt(body, plan, thinks, state);
    let next = await run.next();
    while (!next.done) next = await run.next();
    return next.value;
  }

  /**
   * Calls the engine guided streamed as they came: checked once whole (a number out of the double
   * range passes any grammar), a failure is a 502 since the caller has seen them. Answers their
   * outcomes.
   */
  private async checkStreamedCalls(summary: ChunkSummary, plan: ChatPlan): Promise<StreamPart[]> {
    const outcomes: StreamPart[] = [];
    for (const call of summary.calls) {
      if (call.streaming !== 'guided') continue;
      const tool = plannedTool(plan, call.name);
      await this.settled(call.arguments, {
        check: (text) => checkToolInput(text, tool),
        subject: toolInputSubject(tool.name),
        where: tool.where,
        held: false,
        remaining: () => 0,
        regenerate: () => Promise.reject(new Error('a streamed call is never generated again')),
      });
      outcomes.push(outcomeOf('clean'));
    }
    return outcomes;
  }

  /**
   * A held tool call as its block, once its input passed the check (repaired once if it did
   * not). Input cut off by the output budget is passed on as it is, like every backend's: the
   * answer says max_tokens, and the assembler keeps what arrived.
   */
  private async release(call: PendingCall, state: StepState, truncated: boolean): Promise<StreamPart[]> {
    const tool = call.tool;
    // Cut before its name came: a call of no tool, nothing to keep.
    if (!tool && truncated && call.name === '') return [];
    if (!tool) throw notOfferedError(call.name);
    if (truncated) return blockParts(tool, call.arguments);
    const settled = await this.settled(
      call.arguments,
      this.inputCheck(tool, state, (text) => checkToolInput(text, tool)),
    );
    const outcome = settled.regenerated ? 'repaired' : ORIGIN_OUTCOMES[call.origin];
    return blockParts(tool, JSON.stringify(settled.value), outcome);
  }

  /**
   * A call that streamed some of its members and then proved broken (not JSON, cut short, a
   * required field missing): its input is repaired, and the block finished with the members the
   * repair adds to those sent (call/input-members.ts).
   */
  private async finishOpenCall(call: OpenCall, state: StepState): Promise<StreamPart[]> {
    const { tool, members } = call;
    const settled = await this.settled(
      members.text,
      this.inputCheck(tool, state, (text) => {
        const parsed = checkToolInput(text, tool);
        return parsed.violation !== undefined ? parsed : checkToolValue(members.completed(parsed.value), tool);
      }),
    );
    const parts: StreamPart[] = [];
    const completion = members.completion(JSON.parse(settled.text) as Record<string, unknown>);
    parts.push({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: completion } });
    parts.push(outcomeOf('repaired'), { type: 'block-stop' });
    return parts;
  }

  /** The check of a held call's input, repaired once as the engine's structured output of that input alone. */
  private inputCheck(
    tool: OfferedTool,
    state: StepState,
    check: (text: string) => Checked<Record<string, unknown>>,
  ): OutputCheck<Record<string, unknown>> {
    return {
      check,
      subject: toolInputSubject(tool.name),
      where: tool.where,
      held: true,
      remaining: () => this.remaining(state),
      regenerate: async (_output, violation) => {
        this.report({ type: 'regeneration', backend: this.name, output: 'tool_input' });
        return { text: await this.repair(tool, violation, state), truncated: false };
      },
    };
  }

  /** The one output check; a failure is a 502 (a FailedCall, so that the stream counts the call first). */
  private async settled(
    output: string,
    check: OutputCheck<Record<string, unknown>>,
  ): Promise<{ text: string; value: Record<string, unknown>; regenerated: boolean }> {
    try {
      const settled = await settleOutput(output, check);
      if (settled.truncated)
        throw new ServiceError('model_output_invalid', `${check.subject} was cut by max_tokens when it was repaired`);
      return settled;
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'model_output_invalid') throw new FailedCall(error);
      throw error;
    }
  }

  /**
   * The tool's input once more (issue 35): the engine asked for that input alone, under its
   * structured-output option where it has one (output-plan.ts, repairPlan), in the same turn,
   * spending from the same step budget.
   */
  private async repair(tool: OfferedTool, violation: string, state: StepState): Promise<string> {
    const repaired = repairPlan(tool, state.plan.tools.length > 0 ? state.plan.tools : [tool], this.profile);
    const instruction = [repaired.instruction, inputRetryNote(tool.name, violation)].filter(Boolean).join('\n');
    const plan: ChatPlan = { ...repaired, instruction, holdAll: true };
    const { summary } = await this.collect(this.chatRequest(state, plan, false, []), plan, false, state);
    const call = summary.calls.find((candidate) => candidate.name === tool.name);
    if (!call) {
      throw new ServiceError(
        'model_output_invalid',
        `the model did not call the tool "${tool.name}" again after its input failed ${tool.where}: ${violation}`,
      );
    }
    return call.arguments;
  }

  /**
   * The engine's prompt count where it is the whole prompt: not from an engine that counts only
   * what missed its cache (engine-profiles.ts), and not a 0, which no real prompt is. The tokens
   * its prefix cache held are split off as the public API splits them: `input_tokens` excludes
   * what was read from the cache.
   */
  private promptUsage(summary: ChunkSummary): StreamPart | undefined {
    const whole = summary.promptTokens;
    if (!this.profile.wholePromptUsage || whole === undefined || whole <= 0) return undefined;
    const cached = Math.min(Math.max(summary.cachedTokens ?? 0, 0), whole);
    return { type: 'input-tokens', count: whole - cached, cacheRead: cached };
  }

  /**
   * The first step's prompt counted by the engine's tokenizer, where the engine's usage gave no
   * count (no usage, or a 0) and `message_start` may have carried the estimate (`countTokens:
   * "engine"`, prompt-token-counter.ts): the final usage is then exact all the same. Rare (every
   * engine with a tokenizer endpoint sends usage when asked); a count that fails now leaves the
   * estimate, as the answer itself is whole.
   */
  private async countedAfterwards(call: ModelCall): Promise<StreamPart | undefined> {
    if (call.step !== 0 || this.config.countTokens !== 'engine' || !this.counter.countsExactly) return undefined;
    const count = await this.countTokens(call, 'exact').catch(() => undefined);
    return count === undefined ? undefined : { type: 'input-tokens', count };
  }

  private remaining(state: StepState): number {
    return state.call.outputBudget - state.outputTokens;
  }
}

function blockParts(tool: OfferedTool, inputJson: string, outcome?: ToolCallOutcome): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'block-start', block: toolCallBlock(tool) }];
  if (inputJson !== '')
    parts.push({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: inputJson } });
  if (outcome) parts.push(outcomeOf(outcome));
  parts.push({ type: 'block-stop' });
  return parts;
}

function outcomeOf(outcome: ToolCallOutcome): StreamPart {
  return { type: 'tool-call-outcome', outcome };
}

/** A call's input that failed for good: its 502, once the stream has counted the call as failed. */
class FailedCall extends Error {
  constructor(readonly error: ServiceError) {
    super(error.message);
  }
}
