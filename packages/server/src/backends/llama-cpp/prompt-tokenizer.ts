/**
 * A prompt's tokens in the model's own tokenizer, off the event loop, and refused by its length
 * before any tokenizing when it cannot fit. node-llama-cpp tokenizes synchronously: on the loop a
 * 31 MB prompt held every request for 11 to 13 s before admission control saw it.
 *
 * The bound: each token stands for at most its own text, so a prompt of B UTF-8 bytes has at
 * least B / L tokens, L being the vocabulary's longest token text in bytes (the worker reads it
 * from the vocabulary; at least 4, for an unknown token that stands for one character). A
 * JavaScript string's length in UTF-16 units is at most its UTF-8 byte length (one unit is 1 to 3
 * bytes, a pair of them 4), so the rendered prompt's length / L is a lower bound for any
 * tokenizer whose tokens cover every byte: true of BPE, SentencePiece and RWKV vocabularies, and
 * the bound is skipped for the others (tokenizer-thread.ts).
 *
 * The tokenizing itself runs in a worker thread holding the model's vocabulary alone, one per model
 * file, started with the first model loaded from it and shared by every other loaded from the same
 * file (sharedPromptTokenizer); prompts are tokenized one at a time in arrival order. A worker
 * that fails takes the prompts waiting on it with it (a 500), and the next one starts a fresh one.
 */
import type { Worker } from 'node:worker_threads';
import type { LlamaText, Token } from 'node-llama-cpp';
import { startWorker } from '../../runtime/start-worker.js';
import { promptTooLong } from '../prompt-too-long.js';
import type { TokenizerReply, TokenizerRequest } from './tokenizer-thread.js';

interface Facts {
  longestTokenBytes: number;
  boundHolds: boolean;
}

interface Pending {
  resolve: (tokens: Token[]) => void;
  reject: (error: Error) => void;
}

/** What a loaded model holds: the tokenizer of its file, until it gives it back. */
export interface TokenizerLease {
  tokenizer: PromptTokenizer;
  /** Gives the tokenizer back; the last model of the file to give it back closes it. */
  release(): Promise<void>;
}

/** The tokenizers in use, by model file, with how many loaded models use each. */
const shared = new Map<string, { tokenizer: PromptTokenizer; users: number }>();

/**
 * The tokenizer of the model file at `modelPath`, started now if no other loaded model uses it:
 * a thread costs ~1.5 s of CPU to start (node-llama-cpp loaded again in it), and two models of the
 * same file (two entries with other settings) tokenize alike.
 */
export function sharedPromptTokenizer(modelPath: string): TokenizerLease {
  let entry = shared.get(modelPath);
  if (!entry) {
    entry = { tokenizer: new PromptTokenizer(modelPath), users: 0 };
    shared.set(modelPath, entry);
    entry.tokenizer.start();
  }
  entry.users += 1;
  const held = entry;
  let released = false;
  return {
    tokenizer: held.tokenizer,
    release: async () => {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users > 0) return;
      if (shared.get(modelPath) === held) shared.delete(modelPath);
      await held.tokenizer.close();
    },
  };
}

export class PromptTokenizer {
  private worker: Worker | undefined;
  private facts: Promise<Facts> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(private readonly modelPath: string) {}

  /** Starts the worker now, so that loading its vocabulary overlaps the model's own load. */
  start(): void {
    this.ready().catch(() => undefined);
  }

  /**
   * The tokens of `text`, which holds at most `maximum`; a text that cannot fit is refused
   * (prompt_too_long) from its length alone, without tokenizing. The tokens are what the engine
   * evaluates: the sequence pool matches them against what each sequence holds.
   */
  async tokenize(text: LlamaText, maximum: number): Promise<Token[]> {
    const facts = await this.ready();
    if (facts.boundHolds) {
      const atLeast = Math.ceil(characters(text) / facts.longestTokenBytes);
      if (atLeast > maximum) throw promptTooLong(atLeast, maximum, 'at least');
    }
    const id = (this.nextId += 1);
    return new Promise<Token[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker!.postMessage({ id, text: text.toJSON() } satisfies TokenizerRequest);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.lose(worker, 'the tokenizer was closed');
    await worker?.terminate();
  }

  private ready(): Promise<Facts> {
    this.facts ??= new Promise<Facts>((resolve, reject) => {
      const worker = startWorker(import.meta.url, 'tokenizer-thread', { workerData: { modelPath: this.modelPath } });
      this.worker = worker;
      worker.on('message', (reply: TokenizerReply) => {
        if (reply.type === 'ready')
          resolve({ longestTokenBytes: reply.longestTokenBytes, boundHolds: reply.boundHolds });
        else this.settle(reply);
      });
      worker.on('error', (error) => {
        reject(error);
        this.lose(worker, error.message);
      });
      worker.on('exit', (code) => {
        reject(new Error(`the tokenizer worker exited with code ${code} before it was ready`));
        this.lose(worker, `exited with code ${code}`);
      });
      // An idle worker must not keep the service alive. After the listeners: adding a 'message'
      // listener refs a worker again.
      worker.unref();
    });
    return this.facts;
  }

  private settle(reply: Exclude<TokenizerReply, { type: 'ready' }>): void {
    const pending = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    if (reply.type === 'tokenized') pending?.resolve(Array.from(reply.tokens) as Token[]);
    else pending?.reject(new Error(`tokenizing the prompt failed: ${reply.message}`));
  }

  /** Fails every prompt waiting on `worker`; the next one starts a fresh one. */
  private lose(worker: Worker | undefined, why: string): void {
    if (worker === undefined || this.worker !== worker) return;
    this.worker = undefined;
    this.facts = undefined;
    for (const pending of this.pending.values()) pending.reject(new Error(`the tokenizer worker failed: ${why}`));
    this.pending.clear();
  }
}

/** Characters of the text's plain strings; special tokens count as none, which keeps the bound low. */
function characters(text: LlamaText): number {
  let total = 0;
  for (const value of text.values) if (typeof value === 'string') total += value.length;
  return total;
}
