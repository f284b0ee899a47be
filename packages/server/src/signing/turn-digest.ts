/**
 * A digest of an assistant turn's blocks, in order, which a server tool call's id is bound to
 * (server-call-id.ts): the blocks before a call, so that a real call cannot be moved behind
 * other words. Each block counts by what the model said or did in it, which a client sends back
 * unchanged: a text's text (not its citations), a thinking block's thinking (its signature
 * verifies on its own), a call's id, name and input, a result's type and the call it answers (a
 * result's content has no field for a MAC; see the decision record). The same digest comes out
 * of the reply's blocks and of the request's copy of them.
 */
import { createHash, type Hash } from 'node:crypto';
import type { ContentBlock, ContentBlockParam } from '@model-messages/protocol';
import { canonicalJson } from '../json-schema/canonical-json.js';
import { addField } from './signer.js';

export type TurnBlock = ContentBlock | ContentBlockParam;

export class TurnDigest {
  private readonly hash: Hash = createHash('sha256');

  add(block: TurnBlock): void {
    for (const field of digestedFields(block)) addField(this.hash, field);
  }

  /** The digest of the blocks added so far, in base64url; more may be added after. */
  value(): string {
    return this.hash.copy().digest('base64url');
  }
}

/** The digest of `blocks`, in base64url. */
export function turnDigest(blocks: Iterable<TurnBlock>): string {
  const digest = new TurnDigest();
  for (const block of blocks) digest.add(block);
  return digest.value();
}

/** An assistant message's content as blocks: a string is one text block. */
export function contentBlocks(content: string | readonly ContentBlockParam[]): readonly ContentBlockParam[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function digestedFields(block: TurnBlock): string[] {
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
    case 'web_search_tool_result':
    case 'web_fetch_tool_result':
    case 'code_execution_tool_result':
      return [block.type, block.tool_use_id];
    default:
      return [block.type, canonicalJson(block)];
  }
}
