/**
 * The embedded default engine: a GGUF model run in-process by node-llama-cpp (llama.cpp).
 * The model's own chat template formats the conversation; strict tools and output formats are
 * held to their schemas by a grammar; each admitted request gets its own context sequence.
 */
import { randomInt } from 'node:crypto';
import { resolveChatWrapper, type ChatWrapper, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import type { ModelProfile } from '@model-messages/protocol';
import type { Backend } from '../backend.js';
import type { Cancellation } from '../cancellation.js';
import type { ModelCall, ModelPrompt, OfferedTool } from '../call/model-call.js';
import type { Regenerated } from '../call/output-check.js';
import { thinkingBudget } from '../call/thinking-budget.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { promptTooLong } from '../prompt-too-long.js';
import { toChatHistory } from './chat-history.js';
import { collectText } from './collect-text.js';
import { formatRetryHistory } from './format-retry.js';
import { generateResponse } from './generate-response.js';
import { forcedToolPlan, planGeneration, type GenerationPlan } from './generation-plan.js';
import type { LlamaCppBackendConfig } from './llama-cpp-config.js';
import { llamaRuntime } from './llama-runtime.js';
import { modelFile } from './model-file.js';
import { PromptTokenizer } from './prompt-tokenizer.js';
import { SequencePool } from './sequence-pool.js';
import { assertStrictSchemaCompiles, grammarFor } from './structured-output.js';

interface LoadedModel {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  tokenizer: PromptTokenizer;
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

  async *stream(call: ModelCall, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    const signal = cancellation.signal;
    const loaded = await this.load();
    const plan = planGeneration(call);
    const { history } = toChatHistory(call, plan.instruction);
    const chatWrapper = call.thinking.on ? loaded.wrappers.thinking : loaded.wrappers.plain;
    await promptTokens(loaded, chatWrapper, history, plan);
    const guide = plan.structured ? await grammarFor(loaded.llama, plan.structured) : undefined;
    // A strict tool's input that fails is generated again under its grammar: a schema that cannot
    // compile is refused now, as a 400, rather than after the model called the tool.
    plan.strictCalls.forEach(assertStrictSchemaCompiles);
    const sequence = await loaded.pool.borrow({ wait: call.step > 0, signal });
    const outputTokensBefore = sequence.tokenMeter.usedOutputTokens;
    const generateAgain = (
      history: Parameters<typeof collectText>[0]['history'],
      target: GenerationPlan['structured'],
      maxTokens: number,
    ): Promise<Regenerated> =>
      grammarFor(loaded.llama, target!).then(({ grammar }) =>
        collectText({ sequence, chatWrapper: loaded.wrappers.plain, history, grammar, maxTokens, signal }),
      );
    try {
      yield* generateResponse({
        sequence,
        chatWrapper,
        history,
        plan,
        grammar: guide?.grammar,
        // Only the format schema's own grammar makes the answer valid as it streams.
        holdFormat: plan.format !== undefined && guide?.exact !== true,
        call,
        outputBudget: call.outputBudget,
        thoughtBudget: call.thinking.on ? thinkingBudget(call, this.config.thinkingShare) : 0,
        // node-llama-cpp's default seed is fixed: every request would sample the same answer.
        seed: this.config.seed ?? randomInt(2 ** 31),
        signal,
        spentTokens: () => sequence.tokenMeter.usedOutputTokens - outputTokensBefore,
        regenerateInput: (tool: OfferedTool, maxTokens: number) => {
          const forced = forcedToolPlan(tool);
          return generateAgain(toChatHistory(call, forced.instruction).history, forced.structured, maxTokens);
        },
        retryFormat: (answer, violation, maxTokens) =>
          generateAgain(
            formatRetryHistory(history, answer, violation),
            { ...plan.format!, strict: false, kind: 'format' },
            maxTokens,
          ),
      });
    } finally {
      loaded.pool.giveBack(sequence);
    }
  }

  /**
   * The same rendering as `stream` uses, so usage and count_tokens agree with what is evaluated.
   * A prompt that cannot fit the context is refused (prompt-tokenizer.ts).
   */
  async countTokens(prompt: ModelPrompt): Promise<number> {
    const loaded = await this.load();
    const plan = planGeneration(prompt);
    const chatWrapper = prompt.thinking.on ? loaded.wrappers.thinking : loaded.wrappers.plain;
    return promptTokens(loaded, chatWrapper, toChatHistory(prompt, plan.instruction).history, plan);
  }

  async close(): Promise<void> {
    const loaded = await this.loaded?.catch(() => undefined);
    await loaded?.tokenizer.close();
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
    const modelPath = await this.prepare({ progress: false });
    // Started first, so that its vocabulary loads while the model does.
    const tokenizer = new PromptTokenizer(modelPath);
    tokenizer.start();
    try {
      const model = await llama.loadModel({ modelPath });
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
      return { llama, model, context, tokenizer, pool: new SequencePool(context), wrappers };
    } catch (error) {
      await tokenizer.close();
      throw error;
    }
  }
}

/**
 * The prompt's tokens, counted off the event loop. The context is per sequence: a prompt that
 * fills it leaves no room to answer, so it is refused (400 prompt_too_long).
 */
async function promptTokens(
  loaded: LoadedModel,
  chatWrapper: ChatWrapper,
  history: ReturnType<typeof toChatHistory>['history'],
  plan: GenerationPlan,
): Promise<number> {
  const state = chatWrapper.generateContextState({
    chatHistory: history,
    availableFunctions: plan.functions,
    documentFunctionParams: true,
  });
  const maximum = loaded.context.contextSize - 1;
  const tokens = await loaded.tokenizer.count(state.contextText, maximum);
  if (tokens > maximum) throw promptTooLong(tokens, maximum, 'exact');
  return tokens;
}
