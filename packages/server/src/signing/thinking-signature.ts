/**
 * A thinking block's signature: `mms1.<tag>`, the tag over the thinking text, or
 * `mms1.<tag>.<inner>` when the engine gave a signature of its own (a Messages upstream's),
 * which the tag covers too and which goes back to that engine (innerSignature). Made for every
 * backend in one place, the turn's step reader; checked when the block comes back
 * (signed-blocks-check.ts).
 */
import { TAG_CHARACTERS, type Signer } from './signer.js';

const PREFIX = 'mms1.';
const PURPOSE = 'thinking-signature/1';

export function signThinking(signer: Signer, thinking: string, inner: string): string {
  const signature = PREFIX + signer.tag(PURPOSE, [thinking, inner]);
  return inner === '' ? signature : `${signature}.${inner}`;
}

export function thinkingSignatureVerifies(signer: Signer, thinking: string, signature: string): boolean {
  if (!signature.startsWith(PREFIX)) return false;
  const tagEnd = PREFIX.length + TAG_CHARACTERS;
  const rest = signature.slice(tagEnd);
  if (rest !== '' && !rest.startsWith('.')) return false;
  return signer.verifies(signature.slice(PREFIX.length, tagEnd), PURPOSE, [thinking, rest.slice(1)]);
}

/** The engine's own signature inside one of ours; '' when it gave none. Checked on the way in, so not here. */
export function innerSignature(signature: string): string {
  const tagEnd = PREFIX.length + TAG_CHARACTERS;
  return signature.startsWith(PREFIX) ? signature.slice(tagEnd + 1) : '';
}
