/**
 * A GGUF model loaded by node-llama-cpp (llama.cpp), and generation on it. The model's own chat
 * template formats the conversation; strict tools and output formats are held to their schemas
 * by a grammar; each admitted request gets its own context sequence, the one that holds the
 * longest prefix of its prompt (sequence-pool.ts), so that only the rest is evaluated. llama-cpp-backend.ts
 * imports this module only when it loads its model, so that a service without a llama-cpp model
 * never loads node-llama-cpp.
 */
import { randomInt } from 'node:crypto';
import {
  QwenChatWrapper,
  resolveChatWrapper,
  type ChatHistoryItem,
  type ChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import type { ModelProfile } from '@model-messages/protocol';
import type { Cancellation } from '../cancellation.js';
import type { ModelCall, ModelPrompt, OfferedTool } from '../call/model-call.js';
import type { Regenerated } from '../call/output-check.js';
import { thinkingBudget } from '../call/thinking-budget.js';
import type { BackendReport } from '../backend-events.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { promptTooLong } from '../prompt-too-long.js';
import { toChatHistory } from './chat-history.js';
import { collectText } from './collect-text.js';
import { formatRetryHistory } from './format-retry.js';
import { generateResponse } from './generate-response.js';
import { forcedToolPlan, inputTarget, planGeneration, type GenerationPlan } from './generation-plan.js';
import type { LlamaCppBackendConfig } from './llama-cpp-config.js';
import { llamaRuntime, withLoggedReason } from './llama-runtime.js';
import { markedPrefix, sharedPrefix } from './marked-prefix.js';
import { sharedPromptTokenizer, type PromptTokenizer, type TokenizerLease } from './prompt-tokenizer.js';
import { createBatchedContext } from './sequence-batching.js';
import { reusablePrefix, SequencePool } from './sequence-pool.js';
import { assertStrictSchemaCompiles, grammarFor } from './structured-output.js';

/** The backend's name (llama-cpp-backend.ts), as its reports name it. */
const BACKEND_NAME = 'llama-cpp';

export class LoadedModel {
  private constructor(
    private readonly config: LlamaCppBackendConfig,
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly tokenizerLease: TokenizerLease,
    private readonly pool: SequencePool,
    /** Chat wrappers with the model's thinking switch on and off. */
    private readonly wrappers: { thinking: ChatWrapper; plain: ChatWrapper },
    /** Where a regeneration is reported (../backend-events.ts). */
    private readonly report: BackendReport,
  ) {}

  /** Loads the GGUF at `modelPath`; a failure says why, as llama.cpp logged it (llama-runtime.ts). */
  static async load(
    config: LlamaCppBackendConfig,
    profile: ModelProfile,
    modelPath: string,
    report: BackendReport,
  ): Promise<LoadedModel> {
    const llama = await llamaRuntime(config.gpu);
    // Shared with the other models loaded from the same file (prompt-tokenizer.ts).
    const tokenizer = sharedPromptTokenizer(modelPath);
    try {
      const model = await withLoggedReason(() => llama.loadModel({ modelPath }));
      tokenizer.tokenizer.readVocabulary(model);
      const contextSize = config.contextSize ?? Math.min(profile.contextWindow, model.trainContextSize);
      // node-llama-cpp gives each sequence the whole contextSize: memory grows with the sequences.
      // Concurrent generations share decode batches (sequence-batching.ts).
      const context = await createBatchedContext(model, {
        contextSize,
        sequences: Math.max(config.sequences ?? config.concurrency, config.concurrency),
        threads: config.threads,
      });
      const type = config.chatWrapper;
      const thinking = resolveChatWrapper(model, { type });
      const wrappers = {
        thinking,
        // The model's own switch where its wrapper has one (Qwen3: /no_think); the thought budget of 0 does the rest.
        // Only a Qwen wrapper reads that setting: any other resolves to the same wrapper again, and
        // resolving `auto` renders the model's Jinja template under many options (about half a second).
        plain:
          thinking instanceof QwenChatWrapper
            ? resolveChatWrapper(model, { type, customWrapperSettings: { qwen: { thoughts: 'discourage' } } })
            : thinking,
      };
      return new LoadedModel(
        config,
        llama,
        model,
        context,
        tokenizer,
        new SequencePool(context, config.concurrency, config.reusePrefix),
        wrappers,
        report,
      );
    } catch (error) {
      await tokenizer.release();
      throw error;
    }
  }

  async *stream(call: ModelCall, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    const signal = cancellation.signal;
    const plan = planGeneration(call);
    const { history } = toChatHistory(call, plan.instruction);
    const chatWrapper = call.thinking.on ? this.wrappers.thinking : this.wrappers.plain;
    const tokens = await this.promptTokens(chatWrapper, history, plan);
    const marked = await this.markedTokens(call, plan, chatWrapper, tokens);
    const guide = plan.structured ? await grammarFor(this.llama, plan.structured) : undefined;
    // A strict tool's call is generated under its exact grammar: a schema that cannot compile is
    // refused now, as a 400, rather than after the model called the tool.
    plan.strictCalls.forEach(assertStrictSchemaCompiles);
    const sequence = await this.pool.borrow({ wait: call.step > 0, signal, tokens });
    const outputTokensBefore = sequence.tokenMeter.usedOutputTokens;
    const generateAgain = (
      history: Parameters<typeof collectText>[0]['history'],
      target: GenerationPlan['structured'],
      maxTokens: number,
    ): Promise<Regenerated> =>
      grammarFor(this.llama, target!).then(({ grammar }) =>
        collectText({ sequence, chatWrapper: this.wrappers.plain, history, grammar, maxTokens, signal }),
      );
    try {
      if (!this.config.reusePrefix) await sequence.clearHistory();
      // Read before the generation aligns the sequence with the prompt: what it keeps.
      const cacheRead = reusablePrefix(sequence, tokens);
      const cacheCreation = Math.max(0, marked - cacheRead);
      yield* generateResponse({
        sequence,
        chatWrapper,
        history,
        plan,
        grammar: guide?.grammar,
        exactGrammar: guide?.exact === true,
        call,
        outputBudget: call.outputBudget,
        thoughtBudget: call.thinking.on ? thinkingBudget(call, this.config.thinkingShare) : 0,
        // node-llama-cpp's default seed is fixed: every request would sample the same answer.
        seed: this.config.seed ?? randomInt(2 ** 31),
        signal,
        inputTokens: {
          type: 'input-tokens',
          count: tokens.length - cacheRead - cacheCreation,
          cacheRead,
          cacheCreation,
        },
        spentTokens: () => sequence.tokenMeter.usedOutputTokens - outputTokensBefore,
        inputGuide: (tool: OfferedTool) => grammarFor(this.llama, inputTarget(tool)),
        regenerateInput: (tool: OfferedTool, maxTokens: number) => {
          this.report({ type: 'regeneration', backend: BACKEND_NAME, output: 'tool_input' });
          const forced = forcedToolPlan(tool);
          return generateAgain(toChatHistory(call, forced.instruction).history, forced.structured, maxTokens);
        },
        retryFormat: (answer, violation, maxTokens) => {
          this.report({ type: 'regeneration', backend: BACKEND_NAME, output: 'format_answer' });
          return generateAgain(
            formatRetryHistory(history, answer, violation),
            { ...plan.format!, strict: false, kind: 'format' },
            maxTokens,
          );
        },
      });
    } finally {
      this.pool.giveBack(sequence, marked);
    }
  }

  /**
   * The same rendering as `stream` uses, so usage and count_tokens agree with what is evaluated.
   * A prompt that cannot fit the context is refused (prompt-tokenizer.ts).
   */
  async countTokens(prompt: ModelPrompt): Promise<number> {
    const plan = planGeneration(prompt);
    const chatWrapper = prompt.thinking.on ? this.wrappers.thinking : this.wrappers.plain;
    return (await this.promptTokens(chatWrapper, toChatHistory(prompt, plan.instruction).history, plan)).length;
  }

  async close(): Promise<void> {
    await this.tokenizerLease.release();
    await this.context.dispose();
    await this.model.dispose();
  }

  /**
   * The prompt's tokens, tokenized off the event loop, as LlamaChat renders and evaluates them.
   * The context is per sequence: a prompt that fills it leaves no room to answer, so it is
   * refused (400 prompt_too_long).
   */
  private async promptTokens(
    chatWrapper: ChatWrapper,
    history: ChatHistoryItem[],
    plan: GenerationPlan,
  ): Promise<Token[]> {
    const maximum = this.context.contextSize - 1;
    const tokens = await this.tokenizer().tokenize(this.render(chatWrapper, history, plan), maximum, this.model);
    if (tokens.length > maximum) throw promptTooLong(tokens.length, maximum, 'exact');
    return tokens;
  }

  /**
   * Tokens of the prompt up to its last cache_control breakpoint (marked-prefix.ts); 0 without
   * one. Only a breakpoint before the last turn costs a second tokenizing, of that prefix.
   */
  private async markedTokens(
    call: ModelCall,
    plan: GenerationPlan,
    chatWrapper: ChatWrapper,
    tokens: Token[],
  ): Promise<number> {
    const marked = markedPrefix(call, plan.instruction);
    if (marked.kind === 'none') return 0;
    if (marked.kind === 'whole') return tokens.length;
    let text;
    try {
      text = this.render(chatWrapper, marked.history, plan);
    } catch {
      // A template that cannot render the cut conversation (one that demands a user turn, say):
      // the breakpoint is only a hint, and nothing is marked.
      return 0;
    }
    return sharedPrefix(await this.tokenizer().tokenize(text, tokens.length, this.model), tokens);
  }

  private tokenizer(): PromptTokenizer {
    return this.tokenizerLease.tokenizer;
  }

  private render(chatWrapper: ChatWrapper, history: ChatHistoryItem[], plan: GenerationPlan) {
    return chatWrapper.generateContextState({
      chatHistory: history,
      availableFunctions: plan.functions,
      documentFunctionParams: true,
    }).contextText;
  }
}
