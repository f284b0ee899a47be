/**
 * Blocks signed as the service signs them (docs/decisions/0014-signed-server-blocks.md), for
 * tests that need a paused turn or a thinking block the service did not just return: a test
 * service's own signer (`RunningService.signer`) makes them, so that they verify there and the
 * checks stay as strict as they are for any client.
 */
import type { ContentBlockParam, MessageParam } from '@model-messages/protocol';
import {
  conversationDigest,
  resultDigest,
  signCompaction,
  signedServerCallId,
  signThinking,
  TurnDigest,
  type Signer,
  type TurnBlock,
} from '@model-messages/server';

/**
 * `blocks` as this service would have returned them for a turn after `conversation` (the messages
 * before it, as sent), resuming `resumed`: each thinking and compaction block signed, each server_tool_use given
 * an id signed over what comes before it and its result (the result block that answers it later
 * in `blocks`; a call with none gets an id that verifies for no result), and each result block's
 * `tool_use_id` following its call's new id. `bytes`: the ids' nonce bytes (signedServerCallId).
 */
export function signedTurn<Block extends ContentBlockParam>(
  signer: Signer,
  blocks: readonly Block[],
  conversation: readonly MessageParam[] = [],
  resumed: readonly TurnBlock[] = [],
  bytes?: (size: number) => Buffer,
): Block[] {
  const digest = new TurnDigest(conversationDigest(conversation));
  for (const block of resumed) digest.add(block);
  const ids = new Map<string, string>();
  return blocks.map((block, position) => {
    let signed: ContentBlockParam = block;
    if (block.type === 'thinking') signed = { ...block, signature: signThinking(signer, block.thinking, '') };
    else if (block.type === 'compaction' && typeof block.content === 'string')
      signed = { ...block, signature: signCompaction(signer, block.content) };
    else if (block.type === 'server_tool_use') {
      const result = blocks
        .slice(position + 1)
        .find((candidate) => 'tool_use_id' in candidate && candidate.tool_use_id === block.id);
      const answer = (result ?? { type: 'no result' }) as { type: string; content?: unknown };
      const id = signedServerCallId(signer, block, { before: digest.value(), result: resultDigest(answer) }, bytes);
      ids.set(block.id, id);
      signed = { ...block, id };
    } else if ('tool_use_id' in block && ids.has(block.tool_use_id))
      signed = { ...block, tool_use_id: ids.get(block.tool_use_id)! };
    digest.add(signed);
    return signed as Block;
  });
}

/** A thinking block that verifies under `signer`. */
export function signedThinking(
  signer: Signer,
  thinking: string,
): { type: 'thinking'; thinking: string; signature: string } {
  return { type: 'thinking', thinking, signature: signThinking(signer, thinking, '') };
}

/** A compaction block whose summary verifies under `signer` (issue 34). */
export function signedCompaction(
  signer: Signer,
  summary: string,
): { type: 'compaction'; content: string; encrypted_content: null; signature: string } {
  return { type: 'compaction', content: summary, encrypted_content: null, signature: signCompaction(signer, summary) };
}
