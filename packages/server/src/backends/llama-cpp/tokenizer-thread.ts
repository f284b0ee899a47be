/**
 * The body of the process's llama.cpp tokenizer thread (shared-tokenizer-thread.ts): the
 * vocabularies alone (`vocabOnly`: no weights) of the model files it is asked about, each loaded
 * by the first prompt of its file and dropped when the main thread releases it; prompts (or runs
 * of a prompt's text) in, their tokens out. Says `ready` once node-llama-cpp is loaded.
 */
import { parentPort } from 'node:worker_threads';
import { getLlama, LlamaText, type LlamaModel, type LlamaTextJSON } from 'node-llama-cpp';

/** A whole prompt, or one run of plain text with the options it is tokenized with (tokenized-runs.ts). */
export type Tokenizable = { text: LlamaTextJSON } | { run: { text: string; options: 'trimLeadingSpace' | undefined } };

export type TokenizeRequest = { id: number; modelPath: string } & Tokenizable;

/** No file of the main thread uses `modelPath` any longer: its vocabulary is dropped. */
export interface ReleaseRequest {
  release: string;
}

export type TokenizerRequest = TokenizeRequest | ReleaseRequest;

export type TokenizerReply =
  | { type: 'ready' }
  /** The tokens' buffer is transferred, not copied: a long prompt's tokens cross once. */
  | { type: 'tokenized'; id: number; tokens: Uint32Array }
  | { type: 'failed'; id: number; message: string };

const port = parentPort!;
const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' as never });
const vocabularies = new Map<string, Promise<LlamaModel>>();

function vocabulary(modelPath: string): Promise<LlamaModel> {
  let loaded = vocabularies.get(modelPath);
  if (loaded === undefined) {
    loaded = llama.loadModel({ modelPath, vocabOnly: true });
    vocabularies.set(modelPath, loaded);
    // A file that failed to load is read again by its next prompt.
    loaded.catch(() => vocabularies.get(modelPath) === loaded && vocabularies.delete(modelPath));
  }
  return loaded;
}

async function tokenize(request: TokenizeRequest): Promise<void> {
  const id = request.id;
  let tokens: Uint32Array<ArrayBuffer>;
  try {
    const model = await vocabulary(request.modelPath);
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
}

async function release(modelPath: string): Promise<void> {
  const loaded = vocabularies.get(modelPath);
  vocabularies.delete(modelPath);
  await (await loaded?.catch(() => undefined))?.dispose();
}

port.on('message', (request: TokenizerRequest) => {
  if ('release' in request) void release(request.release);
  else void tokenize(request);
});
port.postMessage({ type: 'ready' } satisfies TokenizerReply);
