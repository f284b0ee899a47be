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
 * one in the process's tokenizer thread (shared-tokenizer-thread.ts), which holds the vocabulary
 * alone of each file it tokenizes for, started by the first long prompt: a service that only sees
 * short prompts never pays its start. Every model loaded from the same file shares one
 * PromptTokenizer (sharedPromptTokenizer), and with it the file's kept runs.
 *
 * A long prompt's long runs of text (its system prompt, its tools) are kept once tokenized
 * (tokenized-runs.ts): the next turn of a conversation tokenizes only what is new in it, on the
 * loop when that is short, in the thread when it is not.
 */
import { LlamaVocabularyType, type LlamaModel, type LlamaText, type Token } from 'node-llama-cpp';
import { promptTooLong } from '../prompt-too-long.js';
import { tokenizerThread } from './shared-tokenizer-thread.js';
import type { Tokenizable } from './tokenizer-thread.js';
import { isLongRun, KEPT_CHARACTERS, planRuns, TokenizedRuns, type LongRun } from './tokenized-runs.js';

/** Characters of prompt text tokenized on the event loop, a few milliseconds of work; past it, in the thread. */
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
 * entries with other settings tokenize alike).
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
  private facts: Facts | undefined;
  private closed = false;
  /** Long runs of text tokenized before, by this file's vocabulary. */
  private readonly runs: TokenizedRuns;

  /** `keptCharacters`: of long runs, all together (tokenized-runs.ts); tests make it small. */
  constructor(
    private readonly modelPath: string,
    keptCharacters = KEPT_CHARACTERS,
  ) {
    this.runs = new TokenizedRuns(keptCharacters);
    tokenizerThread.hold(modelPath);
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
    if (planned === undefined) return this.inThread({ text: text.toJSON() });
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
          : this.inThread({ run }),
      ),
    );
    missing.forEach((run, index) => {
      known.set(run, tokenized[index]!);
      this.runs.set(run, tokenized[index]!);
    });
    return planned.flatMap((part) => (isLongRun(part) ? known.get(part)! : part));
  }

  /** Tokenized in the process's tokenizer thread: a whole prompt, or one run of it. */
  private inThread(what: Tokenizable): Promise<Token[]> {
    return tokenizerThread.tokenize(this, this.modelPath, what);
  }

  /** Fails the prompts still waiting on the thread; the last tokenizer of the file drops its vocabulary there. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    tokenizerThread.letGo(this, this.modelPath);
  }
}

/** Characters of the text's plain strings; special tokens count as none, which keeps the bound low. */
function characters(text: LlamaText): number {
  let total = 0;
  for (const value of text.values) if (typeof value === 'string') total += value.length;
  return total;
}
