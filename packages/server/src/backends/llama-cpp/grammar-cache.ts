/**
 * The two caches of structured output, both keyed by text and bounded in bytes (issue 31): a
 * count alone let 256 grammars of up to 1,000,000 characters each (gbnf-limits.ts) stay, half a
 * gigabyte of text and more of llama.cpp's parsed rules. The oldest entry goes first.
 *
 * - GrammarCache: compiled grammars by their GBNF text, one cache per runtime.
 * - GbnfCache: a schema's GBNF text by the schema's JSON, so that a request that offers the same
 *   tools as the last one does not convert each schema again (issue 36: Claude Code's tool
 *   schemas take about 36 µs each to convert, 3 µs each to serialise as the key).
 */
import type { LlamaGrammar } from 'node-llama-cpp';

/** Bytes of grammars kept per runtime, as estimated below. */
export const GRAMMAR_CACHE_BYTES = 32 * 1024 * 1024;
/** A grammar's text as a key (two bytes a character) and llama.cpp's parsed rules, a few bytes a character more. */
const BYTES_PER_CHARACTER = 8;
/** Bytes of schemas and their GBNF texts kept, for every runtime together. */
export const GBNF_CACHE_BYTES = 16 * 1024 * 1024;

/** Entries by a text key, at most `budgetBytes` of them as `costOf` counts, the oldest dropped first. */
class BoundedTextCache<Value> {
  private readonly entries = new Map<string, Value>();
  private bytes = 0;

  constructor(
    private readonly budgetBytes: number,
    private readonly costOf: (key: string, value: Value) => number,
  ) {}

  get(key: string): Value | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: Value): void {
    const cost = this.costOf(key, value);
    // An entry larger than the whole budget is used by its request and not kept.
    if (cost > this.budgetBytes || this.entries.has(key)) return;
    for (const [oldestKey, oldestValue] of this.entries) {
      if (this.bytes + cost <= this.budgetBytes) break;
      this.entries.delete(oldestKey);
      this.bytes -= this.costOf(oldestKey, oldestValue);
    }
    this.entries.set(key, value);
    this.bytes += cost;
  }

  /** Estimated bytes held, for tests. */
  get heldBytes(): number {
    return this.bytes;
  }
}

export class GrammarCache extends BoundedTextCache<Promise<LlamaGrammar>> {
  constructor() {
    super(GRAMMAR_CACHE_BYTES, (text) => text.length * BYTES_PER_CHARACTER);
  }
}

/** A schema's grammar text, and whether it is the schema's own (nothing of it left out). */
export interface GbnfText {
  text: string;
  exact: boolean;
}

export class GbnfCache extends BoundedTextCache<GbnfText> {
  constructor() {
    // Two bytes a character of the key (the schema's JSON) and of the text.
    super(GBNF_CACHE_BYTES, (key, value) => 2 * (key.length + value.text.length));
  }
}
