/**
 * Blocks signed as the service signs them (docs/decisions/0014-signed-server-blocks.md), for
 * tests that need a paused turn or a thinking block the service did not just return: a test
 * service's own signer (`RunningService.signer`) makes them, so that they verify there and the
 * checks stay as strict as they are for any client.
 */
import type { ContentBlockParam } from '@model-messages/protocol';
import { signedServerCallId, signThinking, TurnDigest, type Signer, type TurnBlock } from '@model-messages/server';

/**
 * `blocks` as this service would have returned them for a turn resumed after `resumed`: each
 * thinking block signed, each server_tool_use given a signed id, and each result block's
 * `tool_use_id` following its call's new id. `bytes`: the ids' nonce bytes (signedServerCallId).
 */
export function signedTurn<Block extends ContentBlockParam>(
  signer: Signer,
  blocks: readonly Block[],
  resumed: readonly TurnBlock[] = [],
  bytes?: (size: number) => Buffer,
): Block[] {
  const digest = new TurnDigest();
  for (const block of resumed) digest.add(block);
  const ids = new Map<string, string>();
  return blocks.map((block) => {
    let signed: ContentBlockParam = block;
    if (block.type === 'thinking') signed = { ...block, signature: signThinking(signer, block.thinking, '') };
    else if (block.type === 'server_tool_use') {
      const id = signedServerCallId(signer, block, digest.value(), bytes);
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
