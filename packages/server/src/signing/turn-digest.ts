/**
 * The digests a server tool call's id is bound to (server-call-id.ts, issue 32): the conversation
 * before the turn, and the turn's blocks before the call, so that a real call cannot be moved
 * behind other words or under another conversation; and the call's own result, so that no text
 * can be put in the model's mouth as its tool's output. Each block counts by what a client sends
 * back unchanged: a text's text (not its citations), a thinking block's thinking (its signature
 * verifies on its own), a call's id, name and input, a result's type, the call it answers and its
 * content. The same digest comes out of the reply's blocks and of the request's copy of them.
 *
 * Content is taken as canonical JSON without `cache_control` (a client moves its cache
 * breakpoints from one request to the next) and without members whose value is null (a client
 * that rebuilds a block from typed objects may leave out a null it was given).
 */
import { createHash, type Hash } from 'node:crypto';
import type { ContentBlock, ContentBlockParam, MessageParam } from '@model-messages/protocol';
import { canonicalJson } from '../json-schema/canonical-json.js';
import { isServerResultType } from '../tool-kinds/server-tool-kinds.js';
import { addField } from './signer.js';

export type TurnBlock = ContentBlock | ContentBlockParam;

export class TurnDigest {
  private readonly hash: Hash = createHash('sha256');

  /** `conversation`: the digest of the messages before the turn (conversationDigest). */
  constructor(conversation?: string) {
    if (conversation !== undefined) addField(this.hash, conversation);
  }

  add(block: TurnBlock): void {
    for (const field of digestedFields(block)) addField(this.hash, field);
  }

  /** The digest of the blocks added so far, in base64url; more may be added after. */
  value(): string {
    return this.hash.copy().digest('base64url');
  }
}

/** The digest of `blocks` after `conversation`, in base64url. */
export function turnDigest(blocks: Iterable<TurnBlock>, conversation?: string): string {
  const digest = new TurnDigest(conversation);
  for (const block of blocks) digest.add(block);
  return digest.value();
}

/** The digest of the messages before a turn: each message's role and blocks, whole. */
export function conversationDigest(messages: readonly MessageParam[]): string {
  const hash = createHash('sha256');
  for (const message of messages) {
    addField(hash, message.role);
    if (message.content === undefined) continue;
    for (const block of contentBlocks(message.content)) addField(hash, contentText(block));
  }
  return hash.digest('base64url');
}

/** The digest of a server tool's result a call's id covers: its type and content, not the id it answers. */
export function resultDigest(result: { type: string; content?: unknown }): string {
  const hash = createHash('sha256');
  addField(hash, result.type);
  addField(hash, contentText(result.content));
  return hash.digest('base64url');
}

/** An assistant message's content as blocks: a string is one text block. */
export function contentBlocks(content: string | readonly ContentBlockParam[]): readonly ContentBlockParam[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function digestedFields(block: TurnBlock): string[] {
  if (isServerResultType(block.type)) {
    const result = block as { type: string; tool_use_id: string; content?: unknown };
    return [result.type, result.tool_use_id, resultDigest(result)];
  }
  switch (block.type) {
    case 'text':
      return [block.type, block.text];
    case 'thinking':
      return [block.type, block.thinking];
    case 'redacted_thinking':
      return [block.type, block.data];
    case 'tool_use':
    case 'server_tool_use':
      return [block.type, block.id, block.name, canonicalJson(block.input)];
    case 'tool_result':
      return [block.type, block.tool_use_id, contentText(block.content)];
    default:
      return [block.type, contentText(block)];
  }
}

/** Canonical JSON of `value` without `cache_control` and without null members. */
function contentText(value: unknown): string {
  return canonicalJson(withoutVolatile(value));
}

function withoutVolatile(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutVolatile);
  if (value === null || typeof value !== 'object') return value;
  const kept: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value))
    if (key !== 'cache_control' && member !== null && member !== undefined) kept[key] = withoutVolatile(member);
  return kept;
}
