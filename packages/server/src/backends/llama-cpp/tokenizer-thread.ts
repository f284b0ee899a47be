/**
 * The body of a llama.cpp tokenizer worker (prompt-tokenizer.ts): the model file's vocabulary
 * alone (`vocabOnly`: no weights), loaded once; prompts (or runs of a prompt's text) in, their
 * tokens out, one at a time. Says
 * `ready` once the vocabulary is loaded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getLlama, LlamaText, type LlamaTextJSON } from 'node-llama-cpp';

/** A whole prompt, or one run of plain text with the options it is tokenized with (tokenized-runs.ts). */
export type TokenizerRequest =
  { id: number; text: LlamaTextJSON } | { id: number; run: { text: string; options: 'trimLeadingSpace' | undefined } };

export type TokenizerReply =
  | { type: 'ready' }
  /** The tokens' buffer is transferred, not copied: a long prompt's tokens cross once. */
  | { type: 'tokenized'; id: number; tokens: Uint32Array }
  | { type: 'failed'; id: number; message: string };

const port = parentPort!;
const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' as never });
const model = await llama.loadModel({ modelPath: (workerData as { modelPath: string }).modelPath, vocabOnly: true });
port.on('message', (request: TokenizerRequest) => {
  const id = request.id;
  let tokens: Uint32Array<ArrayBuffer>;
  try {
    tokens = Uint32Array.from(
      'run' in request
        ? model.tokenizer(request.run.text, false, request.run.options)
        : LlamaText.fromJSON(request.text).tokenize(model.tokenizer),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    port.postMessage({ type: 'failed', id, message } satisfies TokenizerReply);
    return;
  }
  port.postMessage({ type: 'tokenized', id, tokens } satisfies TokenizerReply, [tokens.buffer]);
});
port.postMessage({ type: 'ready' } satisfies TokenizerReply);
