/**
 * The key of the conversation a request continues (issue 36): what a `balance: "session"` list
 * hashes to keep a conversation on the engine that holds its prefix. Read from the wire request
 * here, as every decision about the request is, and handed to the list through its per-request
 * view (backends/backend.ts, `RequestRouting`), since no backend reads the wire request. The
 * first that the request has:
 *
 * 1. the `x-claude-code-session-id` header, which Claude Code sends with every request of a
 *    session (its subagents' included, which then share the session's engine);
 * 2. `metadata.user_id`, which the public API takes for the end user (Claude Code's holds its
 *    session too), the key LiteLLM's cache-aware routing uses;
 * 3. a digest of what stays fixed while a conversation grows: its system prompt, its tools' names
 *    and its first user turn. Each piece counts by its length and its first and last 1,024
 *    characters: Claude Code's system prompt and tools pass 12,000 tokens, hashed whole about 100
 *    µs a request (sha256 on this machine), sampled about 3 µs; two conversations alike in every
 *    sampled character but not in between would share an engine, which costs at most a cache miss.
 *
 * Worked out once, and only when a list asks for it: a list that does not balance by session,
 * and a model with one backend, never do.
 */
import { createHash, type Hash } from 'node:crypto';
import type { MessageRequest } from '@model-messages/protocol';
import type { RequestRouting } from '../backends/backend.js';

/** The header Claude Code sends with every request of a session. */
export const SESSION_HEADER = 'x-claude-code-session-id';

/** Characters taken from each end of a piece of the prefix. */
const SAMPLE_CHARACTERS = 1024;

export class MessageRouting implements RequestRouting {
  private key: string | undefined;

  constructor(
    readonly requestId: string | undefined,
    private readonly sessionHeader: string | undefined,
    private readonly request: MessageRequest,
  ) {}

  conversationKey(): string {
    this.key ??= conversationKey(this.sessionHeader, this.request);
    return this.key;
  }
}

export function conversationKey(sessionHeader: string | undefined, request: MessageRequest): string {
  if (sessionHeader !== undefined && sessionHeader !== '') return `session ${sessionHeader}`;
  const user = request.metadata?.user_id;
  if (user !== undefined && user !== null && user !== '') return `user ${user}`;
  return `prefix ${prefixDigest(request)}`;
}

/** The digest of a conversation's fixed prefix: system prompt, tools' names, first user turn. */
function prefixDigest(request: MessageRequest): string {
  const hash = createHash('sha256');
  const system = request.system;
  if (typeof system === 'string') addSample(hash, system);
  else for (const block of system ?? []) addSample(hash, block.text);
  hash.update('\ntools');
  for (const tool of request.tools ?? []) hash.update(`\n${tool.name}`);
  hash.update('\nfirst');
  const first = request.messages.find((message) => message.role === 'user');
  if (first !== undefined) {
    if (typeof first.content === 'string') addSample(hash, first.content);
    else
      for (const block of first.content) {
        if (block.type === 'text') addSample(hash, block.text);
        else hash.update(`\n${block.type}`);
      }
  }
  return hash.digest('base64url');
}

/** A piece of text by its length and its two ends. */
function addSample(hash: Hash, text: string): void {
  hash.update(`\n${text.length}\n`);
  if (text.length <= 2 * SAMPLE_CHARACTERS) hash.update(text);
  else hash.update(text.slice(0, SAMPLE_CHARACTERS)).update(text.slice(-SAMPLE_CHARACTERS));
}
