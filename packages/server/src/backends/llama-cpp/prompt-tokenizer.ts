/**
 * A prompt's tokens in the model's own tokenizer, refused by its length before any tokenizing
 * when it cannot fit, and off the event loop when it is long. node-llama-cpp tokenizes
 * synchronously: on the loop a 31 MB prompt held every request for 11 to 13 s before admission
 * control saw it.
 *
 * The bound: each token stands for at most its own text, so a prompt of B UTF-8 bytes has at
 * least B / L tokens, L being the vocabulary's longest token text in bytes (read from the
 * vocabulary once; at least 4, for an unknown token that stands for one character). A JavaScript
 * string's length in UTF-16 units is at most its UTF-8 byte length (one unit is 1 to 3 bytes, a
 * pair of them 4), so the rendered prompt's length / L is a lower bound for any tokenizer whose
 * tokens cover every byte: true of BPE, SentencePiece and RWKV vocabularies, and the bound is
 * skipped for the others.
 *
 * A prompt of up to IN_LOOP_CHARACTERS is tokenized on the loop, in a few milliseconds; a longer
 * one in a worker thread holding the model's vocabulary alone, one per model file, started by the
 * first long prompt and shared by every model loaded from the same file (sharedPromptTokenizer):
 * a thread costs ~1.5 s of CPU to start (node-llama-cpp loaded again in it), which a service that
 * only sees short prompts never pays. The worker tokenizes one prompt at a time in arrival order.
 * A worker that fails takes the prompts waiting on it with it (a 500), and the next long prompt
 * starts a fresh one.
 *
 * A long prompt's long runs of text (its system prompt, its tools) are kept once tokenized
 * (tokenized-runs.ts): the next turn of a conversation tokenizes only what is new in it, on the
 * loop when that is short, in the worker when it is not.
 */
import type { Worker } from 'node:worker_threads';
import { LlamaVocabularyType, type LlamaModel, type LlamaText, type Token } from 'node-llama-cpp';
import { startWorker } from '../../runtime/start-worker.js';
import { promptTooLong } from '../prompt-too-long.js';
import type { TokenizerReply, TokenizerRequest } from './tokenizer-thread.js';
import { isLongRun, KEPT_CHARACTERS, planRuns, TokenizedRuns, type LongRun } from './tokenized-runs.js';

/** Characters of prompt text tokenized on the event loop, a few milliseconds of work; past it, in the worker. */
export const IN_LOOP_CHARACTERS = 4096;

/**
 * Vocabularies whose tokens together cover every byte of the text, each token at most its own
 * text's length: byte-level BPE, SentencePiece (a space becomes `▁`, three bytes for one) and
 * RWKV's byte trie. WordPiece and Unigram normalise whitespace away, so a text of spaces can be
 * few tokens: no bound from its length holds for them.
 */
const COVERING_VOCABULARIES: ReadonlySet<LlamaVocabularyType> = new Set([
  LlamaVocabularyType.spm,
  LlamaVocabularyType.bpe,
  LlamaVocabularyType.rwkv,
]);

/** An unknown token may stand for one character of up to four bytes, whatever its own text. */
const LONGEST_CHARACTER_BYTES = 4;

export interface Facts {
  longestTokenBytes: number;
  boundHolds: boolean;
}

/** What the length bound needs, read from the model's vocabulary. */
function vocabularyFacts(model: LlamaModel): Facts {
  let longestTokenBytes = LONGEST_CHARACTER_BYTES;
  for (const token of model.iterateAllTokens())
    longestTokenBytes = Math.max(longestTokenBytes, Buffer.byteLength(model.detokenize([token], true)));
  return { longestTokenBytes, boundHolds: COVERING_VOCABULARIES.has(model.vocabularyType) };
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
 * The tokenizer of the model file at `modelPath`, shared by every loaded model of the file (two
 * entries with other settings tokenize alike): one worker, started by the first long prompt.
 */
export function sharedPromptTokenizer(modelPath: string): TokenizerLease {
  let entry = shared.get(modelPath);
  if (!entry) {
    entry = { tokenizer: new PromptTokenizer(modelPath), users: 0 };
    shared.set(modelPath, entry);
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
  private started: Promise<void> | undefined;
  private facts: Facts | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  /** Long runs of text tokenized before, by this file's vocabulary. */
  private readonly runs: TokenizedRuns;

  /** `keptCharacters`: of long runs, all together (tokenized-runs.ts); tests make it small. */
  constructor(
    private readonly modelPath: string,
    keptCharacters = KEPT_CHARACTERS,
  ) {
    this.runs = new TokenizedRuns(keptCharacters);
  }

  /**
   * Reads what the length bound needs from `model`'s vocabulary (every token detokenized: tens of
   * milliseconds for a large one), once per file. The model's load calls it, so that no request
   * waits on it.
   */
  readVocabulary(model: LlamaModel): Facts {
    return (this.facts ??= vocabularyFacts(model));
  }

  /**
   * The tokens of `text`, which holds at most `maximum`, in `model`'s tokenizer (a model of this
   * tokenizer's file); a text that cannot fit is refused (prompt_too_long) from its length
   * alone, without tokenizing. The tokens are what the engine evaluates: the sequence pool
   * matches them against what each sequence holds.
   */
  async tokenize(text: LlamaText, maximum: number, model: LlamaModel): Promise<Token[]> {
    const facts = this.readVocabulary(model);
    const length = characters(text);
    if (facts.boundHolds) {
      const atLeast = Math.ceil(length / facts.longestTokenBytes);
      if (atLeast > maximum) throw promptTooLong(atLeast, maximum, 'at least');
    }
    if (length <= IN_LOOP_CHARACTERS) return text.tokenize(model.tokenizer);
    // A long prompt is mostly what the conversation's earlier turns sent too: its long runs of
    // text come from those turns' tokenizing (tokenized-runs.ts).
    const planned = facts.boundHolds ? planRuns(text, model, IN_LOOP_CHARACTERS) : undefined;
    if (planned === undefined) return this.inWorker({ text: text.toJSON() });
    // This prompt's runs by their place in it: keeping one may drop another of the same prompt.
    const known = new Map<LongRun, Token[]>();
    const missing: LongRun[] = [];
    for (const run of planned.filter(isLongRun)) {
      const kept = this.runs.get(run);
      if (kept === undefined) missing.push(run);
      else known.set(run, kept);
    }
    const missingCharacters = missing.reduce((total, run) => total + run.text.length, 0);
    const tokenized = await Promise.all(
      missing.map((run) =>
        missingCharacters <= IN_LOOP_CHARACTERS
          ? model.tokenizer(run.text, false, run.options)
          : this.inWorker({ run }),
      ),
    );
    missing.forEach((run, index) => {
      known.set(run, tokenized[index]!);
      this.runs.set(run, tokenized[index]!);
    });
    return planned.flatMap((part) => (isLongRun(part) ? known.get(part)! : part));
  }

  /** Tokenized in the worker: a whole prompt, or one run of it. */
  private async inWorker(request: DistributiveOmit<TokenizerRequest, 'id'>): Promise<Token[]> {
    await this.ready();
    const id = (this.nextId += 1);
    return new Promise<Token[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker!.postMessage({ id, ...request } satisfies TokenizerRequest);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.lose(worker, 'the tokenizer was closed');
    await worker?.terminate();
  }

  private ready(): Promise<void> {
    this.started ??= new Promise<void>((resolve, reject) => {
      const worker = startWorker(import.meta.url, 'tokenizer-thread', { workerData: { modelPath: this.modelPath } });
      this.worker = worker;
      worker.on('message', (reply: TokenizerReply) => {
        if (reply.type === 'ready') resolve();
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
    return this.started;
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
    this.started = undefined;
    for (const pending of this.pending.values()) pending.reject(new Error(`the tokenizer worker failed: ${why}`));
    this.pending.clear();
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Characters of the text's plain strings; special tokens count as none, which keeps the bound low. */
function characters(text: LlamaText): number {
  let total = 0;
  for (const value of text.values) if (typeof value === 'string') total += value.length;
  return total;
}
