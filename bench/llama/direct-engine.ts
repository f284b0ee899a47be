/**
 * node-llama-cpp called directly, set up as the service's llama-cpp backend sets itself up
 * (llama-cpp-backend.ts, generate-response.ts): one context of the same size and threads, one
 * sequence kept across generations (so the prompt's cached prefix is reused alike), a fresh
 * LlamaChat per generation, the model's own chat wrapper and the same generation options. What
 * is left out is everything of the service: HTTP, validation, the turn loop, the emitter.
 */
import {
  getLlama,
  LlamaChat,
  resolveChatWrapper,
  type ChatHistoryItem,
  type ChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaModel,
} from 'node-llama-cpp';

export interface EngineSettings {
  contextSize: number;
  threads: number;
}

export interface GenerationSample {
  /** Tokens generated, counted from the response chunks as the service's emitter counts them. */
  tokens: number;
  /** Wall-clock time of the whole generation (for the service: of the whole request). */
  milliseconds: number;
  /**
   * CPU time of the generating process (every thread: JS and llama.cpp's worker) over the same
   * span. Time the process spent waiting for a core taken by other work is not in it, so on a
   * shared machine it shows the work per token more steadily than the wall clock does.
   */
  cpuMilliseconds: number;
}

/** User plus system CPU time of this process since `since`, in milliseconds. */
export function cpuMillisecondsSince(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

let sharedRuntime: Promise<Llama> | undefined;

/** Same runtime options as the service (llama-runtime.ts): prebuilt CPU binary, offline. */
export function llamaRuntime(): Promise<Llama> {
  sharedRuntime ??= getLlama({ gpu: false, build: 'never', progressLogs: false });
  return sharedRuntime;
}

/** The history the service builds (chat-history.ts) for one user message and no system prompt. */
export function singleTurnHistory(prompt: string): ChatHistoryItem[] {
  return [
    { type: 'user', text: prompt },
    { type: 'model', response: [] },
  ];
}

export class DirectEngine {
  private constructor(
    readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly sequence: LlamaContextSequence,
    private readonly chatWrapper: ChatWrapper,
  ) {}

  static async load(modelPath: string, settings: EngineSettings): Promise<DirectEngine> {
    const llama = await llamaRuntime();
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({
      contextSize: settings.contextSize,
      sequences: 1,
      threads: settings.threads,
    });
    return new DirectEngine(llama, model, context, context.getSequence(), resolveChatWrapper(model));
  }

  /** Prompt length in tokens, formatted by the chat wrapper exactly as generation formats it. */
  promptTokens(prompt: string): number {
    const state = this.chatWrapper.generateContextState({ chatHistory: singleTurnHistory(prompt) });
    return state.contextText.tokenize(this.model.tokenizer).length;
  }

  async generate(prompt: string, maxTokens: number, grammar?: LlamaGrammar): Promise<GenerationSample> {
    const chat = new LlamaChat({
      contextSequence: this.sequence,
      chatWrapper: this.chatWrapper,
      autoDisposeSequence: false,
    });
    let tokens = 0;
    const cpuAtStart = process.cpuUsage();
    const started = performance.now();
    try {
      await chat.generateResponse(singleTurnHistory(prompt), {
        maxTokens,
        temperature: 1,
        budgets: { thoughtTokens: 0 },
        onResponseChunk: (chunk) => {
          tokens += chunk.tokens.length;
        },
        ...(grammar ? { grammar } : {}),
      });
    } finally {
      chat.dispose();
    }
    const milliseconds = performance.now() - started;
    return { tokens, milliseconds, cpuMilliseconds: cpuMillisecondsSince(cpuAtStart) };
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
