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
import { requestThinks, ServiceError, type ConversationRequest, type ModelProfile } from '@mms/protocol';
import type { Backend, BackendStepRequest } from '../backend.js';
import type { Cancellation } from '../cancellation.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { toChatRequest } from './chat-request.js';
import type { ChatCompletionRequest, ChatMessage } from './chat-types.js';
import { ChunkConverter, toolBlock, type ChunkSummary, type PendingCall } from './chunk-conversion.js';
import { EngineClient } from './engine-client.js';
import { ENGINE_PROFILES, type EngineProfile } from './engine-profiles.js';
import type { OpenAiCompatibleBackendConfig } from './openai-compatible-config.js';
import { checkCallInput, formatRetryMessages, formatViolation, stopOf } from './output-checks.js';
import { notOfferedError } from './offered-tools.js';
import { forcedPlan, planChat, type ChatPlan } from './output-plan.js';
import { prepareEngine } from './prepare-engine.js';
import { PromptTokenCounter } from './prompt-token-counter.js';

interface Attempt {
  summary: ChunkSummary;
  sawDone: boolean;
}

/** What one step has spent so far, across its retries and repairs. */
interface StepState {
  step: BackendStepRequest;
  plan: ChatPlan;
  outputTokens: number;
  signal: AbortSignal;
}

export interface OpenAiCompatibleOptions {
  /** Where a warning goes (a tokenizer endpoint that fails); the service's log by default. */
  warn?: (line: string) => void;
  /** The clock, in milliseconds; tests pass their own. */
  now?: () => number;
}

export class OpenAiCompatibleBackend implements Backend {
  readonly name: string;
  private readonly profile: EngineProfile;
  private readonly client: EngineClient;
  private readonly counter: PromptTokenCounter;

  constructor(
    private readonly config: OpenAiCompatibleBackendConfig,
    options: OpenAiCompatibleOptions = {},
  ) {
    this.name = `openai-compatible:${config.engine}`;
    this.profile = ENGINE_PROFILES[config.engine];
    const apiKey = config.apiKey ?? (config.apiKeyEnv ? process.env[config.apiKeyEnv] : undefined);
    this.client = new EngineClient({ ...config, apiKey });
    this.counter = new PromptTokenCounter({
      client: this.client,
      profile: this.profile,
      mode: config.countTokens,
      where: `${this.name} at ${config.baseURL}`,
      warn: options.warn ?? ((line) => process.stderr.write(`mms: ${line}\n`)),
      now: options.now ?? Date.now,
    });
  }

  async *stream(step: BackendStepRequest, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    const state: StepState = {
      step,
      plan: planChat(step.request, this.profile),
      outputTokens: 0,
      signal: cancellation.signal,
    };
    let feedback: ChatMessage[] = [];
    /** The engine's count of the prompt as the request sent it: the first attempt's, not a retry's. */
    let promptTokens: number | undefined;
    for (let retry = 0; ; retry += 1) {
      const body = this.chatRequest(state, state.plan, step.thinks, feedback);
      const { summary, sawDone } = yield* this.attempt(body, state.plan, step.thinks, state);
      if (retry === 0) promptTokens = this.wholePrompt(summary.promptTokens);
      const stop = stopOf(summary, step.request.stop_sequences ?? [], sawDone, this.config.engine);
      const check = state.plan.formatCheck;
      const violation = check && stop.reason === 'end_turn' ? formatViolation(summary.text, check) : undefined;
      if (violation !== undefined) {
        // Held answers can be asked for again unseen; a streamed one was the engine's guided output.
        if (state.plan.holdAll && retry === 0 && this.remaining(state) > 0) {
          feedback = formatRetryMessages(summary.text, violation);
          continue;
        }
        throw new ServiceError(
          'model_output_invalid',
          `the model's answer failed ${check!.where}${retry > 0 ? ' twice' : ''}: ${violation}`,
        );
      }
      const parts = [...summary.tail];
      const truncated = stop.reason === 'max_tokens';
      for (const item of summary.held)
        parts.push(...(item.type === 'pending-call' ? await this.release(item, state, truncated) : [item]));
      // The engine's figure replaces mms's up-front count (an estimate for SGLang and generic) in the final usage.
      if (promptTokens !== undefined) parts.push({ type: 'input-tokens', count: promptTokens });
      parts.push(
        { type: 'output-tokens', count: state.outputTokens },
        { type: 'finish', stopReason: stop.reason, stopSequence: stop.sequence },
      );
      yield parts;
      return;
    }
  }

  async countTokens(request: ConversationRequest, model: ModelProfile): Promise<number> {
    const plan = planChat(request, this.profile);
    const body = toChatRequest({
      request,
      turnSoFar: [],
      plan,
      engine: this.config.engine,
      profile: this.profile,
      model: this.config.model,
      thinking: this.config.thinking,
      thinks: requestThinks(request, model),
      outputBudget: 1,
    });
    return this.counter.count(body);
  }

  prepare(): Promise<string> {
    return prepareEngine(this.client, this.config);
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
    const { step } = state;
    return toChatRequest({
      request: step.request,
      turnSoFar: step.turnSoFar,
      plan,
      engine: this.config.engine,
      profile: this.profile,
      model: this.config.model,
      thinking: this.config.thinking,
      thinks,
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
    const stopSequences = this.profile.stopReport ? [] : (state.step.request.stop_sequences ?? []);
    const converter = new ChunkConverter({ engine: this.config.engine, plan, thinks, stopSequences });
    const chunks = this.client.streamChat(body, state.signal);
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

  /**
   * A held tool call as its block, once its input passed the check (repaired once if it did not).
   * Input cut off by the output budget is passed on as it is, like every backend's: the answer
   * says max_tokens, and the assembler keeps what arrived.
   */
  private async release(call: PendingCall, state: StepState, truncated: boolean): Promise<StreamPart[]> {
    if (!call.tool) throw notOfferedError(call.name);
    if (truncated) return blockParts(call.name, call.tool.server, call.arguments);
    let checked = checkCallInput(call);
    if (checked.violation !== undefined) {
      if (this.remaining(state) <= 0)
        throw new ServiceError(
          'model_output_invalid',
          `the model's input for the tool "${call.name}" failed ${call.tool.where}: ${checked.violation}`,
        );
      checked = checkCallInput({ tool: call.tool, arguments: await this.repair(call, checked.violation, state) });
      if (checked.violation !== undefined)
        throw new ServiceError(
          'model_output_invalid',
          `the model's input for the tool "${call.name}" failed ${call.tool.where} twice: ${checked.violation}`,
        );
    }
    return blockParts(call.name, call.tool.server, JSON.stringify(checked.input));
  }

  /** The tool's input once more, as a forced call held to the schema by the engine where it can. */
  private async repair(call: PendingCall, violation: string, state: StepState): Promise<string> {
    const tool = call.tool!;
    const forced = forcedPlan(tool, state.plan.tools.length > 0 ? state.plan.tools : [tool], this.profile, false);
    const note = `An earlier call of the tool "${tool.name}" had input that failed its JSON Schema (${violation}); call it again with input that matches the schema.`;
    const plan: ChatPlan = {
      ...forced,
      instruction: [forced.instruction, note].filter(Boolean).join('\n'),
      holdAll: true,
    };
    const body = this.chatRequest(state, plan, false, []);
    const run = this.attempt(body, plan, false, state);
    let next = await run.next();
    while (!next.done) next = await run.next();
    const repaired = next.value.summary.calls.find((candidate) => candidate.name === tool.name);
    if (!repaired)
      throw new ServiceError(
        'model_output_invalid',
        `the model did not call the tool "${tool.name}" again after its input failed ${tool.where}: ${violation}`,
      );
    return repaired.arguments;
  }

  /**
   * The engine's prompt count where it is the whole prompt: not from an engine that counts only
   * what missed its cache (engine-profiles.ts), and not a 0, which no real prompt is.
   */
  private wholePrompt(reported: number | undefined): number | undefined {
    return this.profile.wholePromptUsage && reported !== undefined && reported > 0 ? reported : undefined;
  }

  private remaining(state: StepState): number {
    return state.step.outputBudget - state.outputTokens;
  }
}

function blockParts(name: string, server: boolean, inputJson: string): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'block-start', block: toolBlock(name, server) }];
  if (inputJson !== '')
    parts.push({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: inputJson } });
  parts.push({ type: 'block-stop' });
  return parts;
}
