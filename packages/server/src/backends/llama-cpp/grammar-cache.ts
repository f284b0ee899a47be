/**
 * Compiled grammars by their text, for one runtime, bounded in bytes (issue 31): a count alone let
 * 256 grammars of up to 1,000,000 characters each (gbnf-limits.ts) stay, half a gigabyte of text
 * and more of llama.cpp's parsed rules. The oldest compiled goes first.
 */
import type { LlamaGrammar } from 'node-llama-cpp';

/** Bytes of grammars kept per runtime, as estimated below. */
export const GRAMMAR_CACHE_BYTES = 32 * 1024 * 1024;
/** A grammar's text as a key (two bytes a character) and llama.cpp's parsed rules, a few bytes a character more. */
const BYTES_PER_CHARACTER = 8;

export class GrammarCache {
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private bytes = 0;

  get(text: string): Promise<LlamaGrammar> | undefined {
    return this.grammars.get(text);
  }

  set(text: string, grammar: Promise<LlamaGrammar>): void {
    const cost = text.length * BYTES_PER_CHARACTER;
    // A grammar larger than the whole budget is used by its request and not kept.
    if (cost > GRAMMAR_CACHE_BYTES) return;
    for (const [oldest] of this.grammars) {
      if (this.bytes + cost <= GRAMMAR_CACHE_BYTES) break;
      this.grammars.delete(oldest);
      this.bytes -= oldest.length * BYTES_PER_CHARACTER;
    }
    this.grammars.set(text, grammar);
    this.bytes += cost;
  }

  /** Estimated bytes held, for tests. */
  get heldBytes(): number {
    return this.bytes;
  }
}
