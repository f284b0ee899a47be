/**
 * The tokens of long runs of plain text, kept by their text: a conversation sends the same system
 * prompt and tool definitions with every turn (6,000 tokens and more for an agent), and
 * tokenizing them took 6 ms or more of each request (about 1 ms per 1,000 tokens), spent again
 * by every turn and only to learn what the previous turn already knew.
 *
 * node-llama-cpp tokenizes a rendered prompt (a LlamaText) run by run: the plain text between two
 * special tokens is tokenized on its own, and the prompt's tokens are those of its runs, in order
 * (LlamaText.tokenize). So the tokens of a run depend only on its text and the options it was
 * tokenized with, and a run seen before can be taken from here. `planRuns` lets LlamaText.tokenize
 * itself cut the prompt into runs, so the runs are exactly its own: the short ones and the
 * special tokens are tokenized on the spot, within a character budget; each long one is left as a
 * LongRun, to be found here or tokenized (prompt-tokenizer.ts).
 *
 * Only for vocabularies whose tokens cover every byte (prompt-tokenizer.ts): there every run of
 * text yields at least one token, so the placeholder a long run returns while the prompt is cut
 * into runs (one token) leaves LlamaText.tokenize choosing the same options for the runs after
 * it as the real tokens would.
 */
import type { LlamaText, LlamaModel, Token, Tokenizer } from 'node-llama-cpp';

/** A run of plain text this long or longer is kept; shorter ones cost less to tokenize than to look up. */
export const KEPT_RUN_CHARACTERS = 1024;
/** Characters of kept runs, all together (about twice as many bytes, and 4 bytes per token besides). */
export const KEPT_CHARACTERS = 8 * 1024 * 1024;

export interface LongRun {
  text: string;
  options: 'trimLeadingSpace' | undefined;
}

/** A prompt cut into runs, in order: tokens already known, or a long run to look up or tokenize. */
export type PlannedRuns = Array<Token[] | LongRun>;

const OVER_BUDGET = Symbol('over budget');
const PLACEHOLDER = [0 as Token];

/**
 * The prompt's runs in order, the short ones and the special tokens tokenized here; undefined
 * when those take more than `budget` characters (many short messages: then the whole prompt goes
 * to the tokenizer thread, as it did before, and nothing of it is kept).
 */
export function planRuns(text: LlamaText, model: LlamaModel, budget: number): PlannedRuns | undefined {
  const planned: PlannedRuns = [];
  let spent = 0;
  const cutter = (value: string, specialTokens?: boolean | 'builtin', options?: 'trimLeadingSpace'): Token[] => {
    if (specialTokens !== true && specialTokens !== 'builtin' && value.length >= KEPT_RUN_CHARACTERS) {
      planned.push({ text: value, options });
      return PLACEHOLDER;
    }
    spent += value.length;
    if (spent > budget) throw OVER_BUDGET;
    const tokens = model.tokenizer(value as never, specialTokens as never, options as never);
    planned.push(tokens);
    return tokens;
  };
  try {
    text.tokenize(cutter as unknown as Tokenizer);
  } catch (error) {
    if (error === OVER_BUDGET) return undefined;
    throw error;
  }
  return planned;
}

export function isLongRun(part: Token[] | LongRun): part is LongRun {
  return !Array.isArray(part);
}

/** Kept runs of one vocabulary (one per model file), the least recently used dropped first. */
export class TokenizedRuns {
  /** By options and text (keyOf); a Map keeps insertion order, and a hit is moved to the end. */
  private readonly runs = new Map<string, Token[]>();
  private characters = 0;

  constructor(private readonly keptCharacters = KEPT_CHARACTERS) {}

  get(run: LongRun): Token[] | undefined {
    const key = keyOf(run);
    const tokens = this.runs.get(key);
    if (tokens === undefined) return undefined;
    this.runs.delete(key);
    this.runs.set(key, tokens);
    return tokens;
  }

  set(run: LongRun, tokens: Token[]): void {
    const key = keyOf(run);
    if (key.length > this.keptCharacters) return;
    if (this.runs.has(key)) return;
    this.runs.set(key, tokens);
    this.characters += key.length;
    for (const [oldest] of this.runs) {
      if (this.characters <= this.keptCharacters) break;
      this.runs.delete(oldest);
      this.characters -= oldest.length;
    }
  }
}

function keyOf(run: LongRun): string {
  return `${run.options === undefined ? '-' : 't'}${run.text}`;
}
