/**
 * A compaction block's `signature` (issue 34): `mms1c.<tag>`, the tag over the summary the
 * request's model wrote (signer.ts). A later request that carries the block back drops what came
 * before it and has the model read the summary in its place (call-builder/conversation.ts), so
 * the summary must be the model's own: one whose signature does not verify is refused on the way
 * in (signed-blocks-check.ts), as a thinking block's is. The summary is not bound to the
 * conversation it summarized: the block starts a conversation of its own.
 */
import type { Signer } from './signer.js';

const PREFIX = 'mms1c.';
const PURPOSE = 'compaction-summary/1';

export function signCompaction(signer: Signer, summary: string): string {
  return PREFIX + signer.tag(PURPOSE, [summary]);
}

export function compactionSignatureVerifies(signer: Signer, summary: string, signature: string): boolean {
  return signature.startsWith(PREFIX) && signer.verifies(signature.slice(PREFIX.length), PURPOSE, [summary]);
}
