/**
 * The body of a llama.cpp tokenizer worker (prompt-tokenizer.ts): the model file's vocabulary
 * alone (`vocabOnly`: no weights), loaded once; prompts in, their tokens out, one at a time. Says
 * `ready` once the vocabulary is loaded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getLlama, LlamaText, type LlamaTextJSON } from 'node-llama-cpp';

export interface TokenizerRequest {
  id: number;
  text: LlamaTextJSON;
}

export type TokenizerReply =
  | { type: 'ready' }
  /** The tokens' buffer is transferred, not copied: a long prompt's tokens cross once. */
  | { type: 'tokenized'; id: number; tokens: Uint32Array }
  | { type: 'failed'; id: number; message: string };

const port = parentPort!;
const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' as never });
const model = await llama.loadModel({ modelPath: (workerData as { modelPath: string }).modelPath, vocabOnly: true });
port.on('message', ({ id, text }: TokenizerRequest) => {
  let tokens: Uint32Array<ArrayBuffer>;
  try {
    tokens = Uint32Array.from(LlamaText.fromJSON(text).tokenize(model.tokenizer));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    port.postMessage({ type: 'failed', id, message } satisfies TokenizerReply);
    return;
  }
  port.postMessage({ type: 'tokenized', id, tokens } satisfies TokenizerReply, [tokens.buffer]);
});
port.postMessage({ type: 'ready' } satisfies TokenizerReply);
