/**
 * A model served by an engine's OpenAI-compatible chat completions API (vLLM, SGLang,
 * llama.cpp server, Ollama, or any other): mms stays a stateless front that keeps every rule
 * of the contract. Each step is one streamed engine request; its chunks become parts as they
 * arrive. Output the engine cannot guide to a schema is checked: a call's input that fails (a
 * strict tool's against its schema; any call's when it does not parse or misses a required
 * field, issue 35) is repaired once (held-calls.ts), the engine asked here for that input alone
 * under its structured-output option; an `output_config.format` answer that fails is asked for once more;
 * and a second failure is a clear error of its own kind (`model_output_invalid`): the engine
 * worked, so a fallback list neither moves on nor charges its circuit for what one sample of the
 * model wrote. Calls the model left in its text are taken out of it (leaked-calls/).
 */
import { ServiceError } from '@model-messages/protocol';
import type { Backend, BackendReadiness, TokenCountPurpose } from '../backend.js';
import type { BackendContext } from '../backend-kind.js';
import type { Cancellation } from '../cancellation.js';
import type { ModelCall, ModelPrompt, OfferedTool } from '../call/model-call.js';
import { ANSWER_SUBJECT, checkFormatAnswer, inputRetryNote, settleOutput } from '../call/output-check.js';
import { answeredReadiness, PROBE_TIMEOUT_MS, ReadinessProbe, unreachable } from '../readiness-probe.js';
import type { BackendReport } from '../backend-events.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { toChatRequest } from './chat-request.js';
import type { ChatCompletionRequest, ChatMessage } from './chat-types.js';
import { ChunkConverter } from './chunk-conversion.js';
import type { ChunkSummary } from './chunk-summary.js';
import { EngineClient } from './engine-client.js';
import type { TextCallSyntax } from './leaked-calls/text-call.js';
import { textCallSyntaxes } from './leaked-calls/text-call-syntaxes.js';
import { ENGINE_PROFILES, type EngineProfile } from './engine-profiles.js';
import { formatRetryMessages, stopOf } from './finish-reason.js';
import type { OpenAiCompatibleBackendConfig } from './openai-compatible-config.js';
import { planChat, repairPlan, type ChatPlan } from './output-plan.js';
import { prepareEngine } from './prepare-engine.js';
import { PromptTokenCounter } from './prompt-token-counter.js';
import { FailedCall, outcomeOf, settledHeldParts } from './held-calls.js';

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
      parts.push(
        ...(await settledHeldParts(summary, plan, truncated, {
          repair: (tool, violation) => this.repair(tool, violation, state),
          remaining: () => this.remaining(state),
          regenerated: () => this.report({ type: 'regeneration', backend: this.name, output: 'tool_input' }),
        })),
      );
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
