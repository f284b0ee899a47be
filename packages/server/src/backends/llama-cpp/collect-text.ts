/** A whole generation as one string, for internal second passes that are not streamed. */
import {
  LlamaChat,
  type ChatHistoryItem,
  type ChatWrapper,
  type LlamaContextSequence,
  type LlamaGrammar,
} from 'node-llama-cpp';

export interface CollectOptions {
  sequence: LlamaContextSequence;
  chatWrapper: ChatWrapper;
  history: ChatHistoryItem[];
  grammar: LlamaGrammar;
  maxTokens: number;
  signal: AbortSignal;
}

export interface CollectedText {
  text: string;
  /** Cut by `maxTokens`: not a whole answer, so not one to check. */
  truncated: boolean;
}

export async function collectText(options: CollectOptions): Promise<CollectedText> {
  const chat = new LlamaChat({
    contextSequence: options.sequence,
    chatWrapper: options.chatWrapper,
    autoDisposeSequence: false,
  });
  try {
    const response = await chat.generateResponse(options.history, {
      grammar: options.grammar,
      maxTokens: options.maxTokens,
      signal: options.signal,
      budgets: { thoughtTokens: 0 },
    });
    return { text: response.response, truncated: response.metadata.stopReason === 'maxTokens' };
  } finally {
    chat.dispose();
  }
}
