/**
 * A prefix-caching engine's cache, as bench/replica-replay.ts's fake engines keep it (issue 36):
 * the prompt is cut into blocks of 16 tokens (4 characters a token), each named by a hash of
 * itself and every block before it, as vLLM's automatic prefix caching names its KV blocks; a
 * request reuses the longest run of its first blocks that the cache holds, and every block of
 * its prompt is then kept, the least recently used going first once the cache is full.
 */

export const CHARACTERS_PER_TOKEN = 4;
export const TOKENS_PER_BLOCK = 16;
const BLOCK_CHARACTERS = CHARACTERS_PER_TOKEN * TOKENS_PER_BLOCK;

/** What an OpenAI-compatible engine is sent: the parts of it that make the prompt. */
export interface ChatBody {
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown }>;
  tools?: unknown;
}

/** The prompt as a chat template would lay it out: the tools, then each message in turn. */
export function renderedPrompt(body: ChatBody): string {
  const parts = [JSON.stringify(body.tools ?? [])];
  for (const message of body.messages)
    parts.push(
      `<|${message.role}|>${typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '')}` +
        (message.tool_calls === undefined ? '' : JSON.stringify(message.tool_calls)) +
        (message.tool_call_id === undefined ? '' : String(message.tool_call_id)),
    );
  return parts.join('\n');
}

export function promptTokens(prompt: string): number {
  return Math.ceil(prompt.length / CHARACTERS_PER_TOKEN);
}

/**
 * Each whole block's name: two 32-bit FNV-1a hashes, seeded apart, over the block's characters
 * and carried on from the block before, so that a block's name says its whole prefix. A last
 * partial block is never cached, as in vLLM.
 */
export function blockNames(prompt: string): string[] {
  const names: string[] = [];
  let first = 0x811c9dc5;
  let second = 0x01000193;
  for (let end = BLOCK_CHARACTERS; end <= prompt.length; end += BLOCK_CHARACTERS) {
    for (let index = end - BLOCK_CHARACTERS; index < end; index += 1) {
      const code = prompt.charCodeAt(index);
      first = Math.imul(first ^ code, 0x01000193);
      second = Math.imul(second ^ code, 0x5bd1e995);
    }
    names.push(`${first >>> 0}.${second >>> 0}`);
  }
  return names;
}

/** An engine's cache of blocks, `capacityTokens` at most. */
export class PrefixCache {
  /** Block names, least recently used first (a Map keeps the order of insertion). */
  private readonly blocks = new Map<string, true>();
  private readonly capacityBlocks: number;

  constructor(capacityTokens: number) {
    this.capacityBlocks = Math.floor(capacityTokens / TOKENS_PER_BLOCK);
  }

  /** The tokens of the longest cached run of first blocks; then every block is kept as the newest. */
  reuse(names: readonly string[]): number {
    let cached = 0;
    while (cached < names.length && this.blocks.has(names[cached]!)) cached += 1;
    for (const name of names) {
      this.blocks.delete(name);
      this.blocks.set(name, true);
    }
    while (this.blocks.size > this.capacityBlocks) this.blocks.delete(this.blocks.keys().next().value!);
    return cached * TOKENS_PER_BLOCK;
  }

  clear(): void {
    this.blocks.clear();
  }
}
