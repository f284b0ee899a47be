/**
 * A model served by an engine's OpenAI-compatible chat completions API (vLLM, SGLang,
 * llama.cpp server, Ollama, or any other): mms stays a stateless front that keeps every rule
 * of the contract. Each step is one streamed engine request; its chunks become parts as they
 * arrive. Output the engine cannot guide to a schema is checked here: a strict tool's input
 * that fails is generated once more as a forced call, an `output_config.format` answer that
 * fails is asked for once more, and a second failure is a clear error of its own kind
 * (`model_output_invalid`): the engine worked, so a fallback list neither moves on nor charges
 * its circuit for what one sample of the model wrote.
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
  inputRetryNote,
  settleOutput,
  toolInputSubject,
} from '../call/output-check.js';
import { notOfferedError, toolCallBlock } from '../call/tool-calls.js';
import { answeredReadiness, PROBE_TIMEOUT_MS, ReadinessProbe, unreachable } from '../readiness-probe.js';
import type { BackendReport } from '../backend-events.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { toChatRequest } from './chat-request.js';
import type { ChatCompletionRequest, ChatMessage } from './chat-types.js';
import { ChunkConverter, type ChunkSummary, type PendingCall } from './chunk-conversion.js';
import { EngineClient } from './engine-client.js';
import { ENGINE_PROFILES, type EngineProfile } from './engine-profiles.js';
import { formatRetryMessages, stopOf } from './finish-reason.js';
import type { OpenAiCompatibleBackendConfig } from './openai-compatible-config.js';
import { forcedPlan, planChat, plannedTool, type ChatPlan } from './output-plan.js';
import { prepareEngine } from './prepare-engine.js';
import { PromptTokenCounter } from './prompt-token-counter.js';

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

  constructor(
    private readonly config: OpenAiCompatibleBackendConfig,
    options: Pick<BackendContext, 'warn' | 'report' | 'now' | 'modelLabel' | 'telemetryName'>,
  ) {
    this.name = `openai-compatible:${config.engine}`;
    this.telemetryName = options.telemetryName;
    this.profile = ENGINE_PROFILES[config.engine];
    this.report = options.report;
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
    if (!truncated) await this.checkStreamedCalls(summary, plan);
    const parts = [...summary.tail];
    for (const item of summary.held)
      parts.push(...(item.type === 'pending-call' ? await this.release(item, state, truncated) : [item]));
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
    const converter = new ChunkConverter({ engine: this.config.engine, plan, thinks, stopSequences });
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
   * range passes any grammar), a failure is a 502 since the caller has seen them.
   */
  private async checkStreamedCalls(summary: ChunkSummary, plan: ChatPlan): Promise<void> {
    for (const call of summary.calls) {
      if (call.held) continue;
      const tool = this.toolNamed(call.name, plan);
      await settleOutput(call.arguments, {
        check: (text) => checkToolInput(text, tool),
        subject: toolInputSubject(tool.name),
        where: tool.where,
        held: false,
        remaining: () => 0,
        regenerate: () => Promise.reject(new Error('a streamed call is never generated again')),
      });
    }
  }

  /**
   * A held tool call as its block, once its input passed the check (generated once more as a
   * forced call if it did not). Input cut off by the output budget is passed on as it is, like
   * every backend's: the answer says max_tokens, and the assembler keeps what arrived.
   */
  private async release(call: PendingCall, state: StepState, truncated: boolean): Promise<StreamPart[]> {
    const tool = call.tool;
    // Cut before its name came: a call of no tool, nothing to keep.
    if (!tool && truncated && call.name === '') return [];
    if (!tool) throw notOfferedError(call.name);
    if (truncated) return blockParts(tool, call.arguments);
    const settled = await settleOutput(call.arguments, {
      check: (text) => checkToolInput(text, tool),
      subject: toolInputSubject(tool.name),
      where: tool.where,
      held: true,
      remaining: () => this.remaining(state),
      regenerate: async (_output, violation) => {
        this.report({ type: 'regeneration', backend: this.name, output: 'tool_input' });
        return { text: await this.repair(tool, violation, state), truncated: false };
      },
    });
    return blockParts(tool, settled.truncated ? settled.text : JSON.stringify(settled.value));
  }

  /** The tool's input once more, as a forced call held to the schema by the engine where it can. */
  private async repair(tool: OfferedTool, violation: string, state: StepState): Promise<string> {
    const forced = forcedPlan(tool, state.plan.tools.length > 0 ? state.plan.tools : [tool], this.profile, false);
    const instruction = [forced.instruction, inputRetryNote(tool.name, violation)].filter(Boolean).join('\n');
    const plan: ChatPlan = { ...forced, instruction, holdAll: true };
    const { summary } = await this.collect(this.chatRequest(state, plan, false, []), plan, false, state);
    const repaired = summary.calls.find((candidate) => candidate.name === tool.name);
    if (!repaired) {
      throw new ServiceError(
        'model_output_invalid',
        `the model did not call the tool "${tool.name}" again after its input failed ${tool.where}: ${violation}`,
      );
    }
    return repaired.arguments;
  }

  private toolNamed(name: string, plan: ChatPlan): OfferedTool {
    const tool = plannedTool(plan, name);
    if (!tool) throw notOfferedError(name);
    return tool;
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

function blockParts(tool: OfferedTool, inputJson: string): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'block-start', block: toolCallBlock(tool) }];
  if (inputJson !== '')
    parts.push({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: inputJson } });
  parts.push({ type: 'block-stop' });
  return parts;
}
