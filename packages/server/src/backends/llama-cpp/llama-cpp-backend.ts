/**
 * The embedded default engine: a GGUF model run in-process by node-llama-cpp (llama.cpp).
 * The model's own chat template formats the conversation; strict tools and output formats are
 * held to their schemas by a grammar; each admitted request gets its own context sequence.
 */
import { randomInt } from 'node:crypto';
import { resolveChatWrapper, type ChatWrapper, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import {
  isCustomTool,
  requestThinks,
  ServiceError,
  type ContentBlockParam,
  type ConversationRequest,
  type MessageRequest,
  type ModelProfile,
} from '@mms/protocol';
import type { Backend, BackendStepRequest } from '../backend.js';
import type { Cancellation } from '../cancellation.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { toChatHistory } from './chat-history.js';
import { generateResponse } from './generate-response.js';
import { forcedToolPlan, planGeneration, type GenerationPlan } from './generation-plan.js';
import type { LlamaCppBackendConfig } from './llama-cpp-config.js';
import { llamaRuntime } from './llama-runtime.js';
import { modelFile } from './model-file.js';
import { SequencePool } from './sequence-pool.js';
import { assertStrictOutput, assertStrictSchemaCompiles, grammarFor } from './structured-output.js';
import { collectText } from './collect-text.js';
import { formatRetryHistory } from './format-answer.js';

interface LoadedModel {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  pool: SequencePool;
  /** Chat wrappers with the model's thinking switch on and off. */
  wrappers: { thinking: ChatWrapper; plain: ChatWrapper };
}

export class LlamaCppBackend implements Backend {
  readonly name = 'llama-cpp';
  private modelPath: Promise<string> | undefined;
  private loaded: Promise<LoadedModel> | undefined;

  constructor(
    private readonly config: LlamaCppBackendConfig,
    private readonly configFolder: string,
    private readonly profile: ModelProfile,
  ) {}

  /** Finds the GGUF, downloading it first if it is remote and not cached. */
  prepare(options: { progress: boolean }): Promise<string> {
    this.modelPath ??= modelFile(this.config.model, {
      configFolder: this.configFolder,
      modelsFolder: this.config.modelsFolder,
      progress: options.progress,
    });
    return this.modelPath;
  }

  async *stream(step: BackendStepRequest, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    const signal = cancellation.signal;
    const loaded = await this.load();
    const request = withTurnSoFar(step.request, step.turnSoFar);
    const plan = planGeneration(request);
    const { history } = toChatHistory(request, plan.systemText);
    const chatWrapper = step.thinks ? loaded.wrappers.thinking : loaded.wrappers.plain;
    assertFits(promptTokens(loaded, chatWrapper, history, plan), loaded.context);
    const guide = plan.structured ? await grammarFor(loaded.llama, plan.structured) : undefined;
    // A strict tool's input that fails is generated again under its grammar: a schema that cannot
    // compile is refused now, as a 400, rather than after the model called the tool.
    plan.strictCalls.forEach(assertStrictSchemaCompiles);
    const sequence = await loaded.pool.borrow({ wait: step.step > 0, signal });
    const outputTokensBefore = sequence.tokenMeter.usedOutputTokens;
    try {
      yield* generateResponse({
        sequence,
        chatWrapper,
        history,
        plan,
        grammar: guide?.grammar,
        // Only the format schema's own grammar makes the answer valid as it streams.
        holdFormat: plan.format !== undefined && guide?.exact !== true,
        request,
        outputBudget: step.outputBudget,
        thoughtBudget: step.thinks ? Math.floor(step.outputBudget * this.config.thinkingShare) : 0,
        // node-llama-cpp's default seed is fixed: every request would sample the same answer.
        seed: this.config.seed ?? randomInt(2 ** 31),
        signal,
        spentTokens: () => sequence.tokenMeter.usedOutputTokens - outputTokensBefore,
        repairInput: (toolName, maxTokens) => this.repairInput(loaded, sequence, request, toolName, maxTokens, signal),
        retryFormat: async (answer, violation, maxTokens) => {
          const { grammar } = await grammarFor(loaded.llama, plan.format!);
          return collectText({
            sequence,
            chatWrapper: loaded.wrappers.plain,
            history: formatRetryHistory(history, answer, violation),
            grammar,
            maxTokens,
            signal,
          });
        },
      });
    } finally {
      loaded.pool.giveBack(sequence);
    }
  }

  /** The same rendering as `stream` uses, so usage and count_tokens agree with what is evaluated. */
  async countTokens(request: ConversationRequest, model: ModelProfile): Promise<number> {
    const loaded = await this.load();
    const plan = planGeneration(request);
    const thinks = requestThinks(request, model);
    return promptTokens(
      loaded,
      thinks ? loaded.wrappers.thinking : loaded.wrappers.plain,
      toChatHistory(request, plan.systemText).history,
      plan,
    );
  }

  async close(): Promise<void> {
    const loaded = await this.loaded?.catch(() => undefined);
    await loaded?.context.dispose();
    await loaded?.model.dispose();
  }

  private load(): Promise<LoadedModel> {
    this.loaded ??= this.loadModel().catch((error: unknown) => {
      this.loaded = undefined;
      throw error;
    });
    return this.loaded;
  }

  private async loadModel(): Promise<LoadedModel> {
    const llama = await llamaRuntime(this.config.gpu);
    const model = await llama.loadModel({ modelPath: await this.prepare({ progress: false }) });
    const contextSize = this.config.contextSize ?? Math.min(this.profile.contextWindow, model.trainContextSize);
    const context = await model.createContext({
      contextSize,
      sequences: this.config.concurrency,
      threads: this.config.threads,
    });
    const type = this.config.chatWrapper;
    const wrappers = {
      thinking: resolveChatWrapper(model, { type }),
      // The model's own switch where its wrapper has one (Qwen3: /no_think); the thought budget of 0 does the rest.
      plain: resolveChatWrapper(model, { type, customWrapperSettings: { qwen: { thoughts: 'discourage' } } }),
    };
    return { llama, model, context, pool: new SequencePool(context), wrappers };
  }

  private async repairInput(
    loaded: LoadedModel,
    sequence: Awaited<ReturnType<SequencePool['borrow']>>,
    request: MessageRequest,
    toolName: string,
    budget: number,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const tool = (request.tools ?? []).filter(isCustomTool).find((candidate) => candidate.name === toolName);
    if (!tool) throw new ServiceError('model_output_invalid', `the model called an unknown tool "${toolName}"`);
    const plan = forcedToolPlan(tool, request, true);
    const target = plan.structured!;
    const { grammar } = await grammarFor(loaded.llama, target);
    const { text } = await collectText({
      sequence,
      chatWrapper: loaded.wrappers.plain,
      history: toChatHistory(request, plan.systemText).history,
      grammar,
      maxTokens: budget,
      signal,
    });
    return assertStrictOutput(text, target);
  }
}

/** The context is per sequence: a prompt that fills it leaves no room to answer. */
function assertFits(inputTokens: number, context: LlamaContext): void {
  if (inputTokens >= context.contextSize) {
    throw new ServiceError(
      'prompt_too_long',
      `prompt is too long: ${inputTokens} tokens > ${context.contextSize - 1} maximum`,
    );
  }
}

function promptTokens(
  loaded: LoadedModel,
  chatWrapper: ChatWrapper,
  history: ReturnType<typeof toChatHistory>['history'],
  plan: GenerationPlan,
): number {
  const state = chatWrapper.generateContextState({
    chatHistory: history,
    availableFunctions: plan.functions,
    documentFunctionParams: true,
  });
  return state.contextText.tokenize(loaded.model.tokenizer).length;
}

/** Server tool calls and results of earlier steps continue the assistant turn. */
function withTurnSoFar(request: MessageRequest, turnSoFar: BackendStepRequest['turnSoFar']): MessageRequest {
  if (turnSoFar.length === 0) return request;
  return {
    ...request,
    messages: [...request.messages, { role: 'assistant', content: turnSoFar as ContentBlockParam[] }],
  };
}
