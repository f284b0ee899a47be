/**
 * A thinking block's signature: `mms1.<tag>`, the tag over the thinking text, or
 * `mms1.<tag>.<inner>` when the engine gave a signature of its own (a Messages upstream's),
 * which the tag covers too and which goes back to that engine (innerSignature). Made for every
 * backend in one place, the turn's step reader; checked when the block comes back
 * (signed-blocks-check.ts).
 *
 * With `thinking.display: "omitted"` the block goes out with empty text, and its signature keeps
 * the text: `mms1h.<tag>.<base64url of the text>`, then `.<inner>` as above. The tag is the same
 * one, over the text; so the model reads its own thinking again when the block comes back, as
 * the public API restores omitted thinking from its signature, and a client can neither read nor
 * change it without the signature failing. The text is encoded, not encrypted: it is the
 * caller's own model output, which the caller chose not to display.
 */
import { TAG_CHARACTERS, type Signer } from './signer.js';

const PREFIX = 'mms1.';
const HIDDEN_PREFIX = 'mms1h.';
const PURPOSE = 'thinking-signature/1';

export function signThinking(signer: Signer, thinking: string, inner: string, hidden = false): string {
  const tag = signer.tag(PURPOSE, [thinking, inner]);
  const signature = hidden ? `${HIDDEN_PREFIX}${tag}.${Buffer.from(thinking).toString('base64url')}` : PREFIX + tag;
  return inner === '' ? signature : `${signature}.${inner}`;
}

export function thinkingSignatureVerifies(signer: Signer, thinking: string, signature: string): boolean {
  const parsed = parseSignature(signature);
  if (!parsed) return false;
  // An omitted block comes back with the empty text it went out with (or, from a client that
  // kept it, its text): the signature's own text is what the tag covers.
  if (parsed.hidden !== undefined && thinking !== '' && thinking !== parsed.hidden) return false;
  return signer.verifies(parsed.tag, PURPOSE, [parsed.hidden ?? thinking, parsed.inner]);
}

/** The engine's own signature inside one of ours; '' when it gave none. Checked on the way in, so not here. */
export function innerSignature(signature: string): string {
  return parseSignature(signature)?.inner ?? '';
}

/** The text an omitted block's signature keeps; '' for any other signature. Checked on the way in, so not here. */
export function hiddenThinking(signature: string): string {
  return parseSignature(signature)?.hidden ?? '';
}

interface ParsedSignature {
  tag: string;
  hidden: string | undefined;
  inner: string;
}

function parseSignature(signature: string): ParsedSignature | undefined {
  const hidden = signature.startsWith(HIDDEN_PREFIX);
  if (!hidden && !signature.startsWith(PREFIX)) return undefined;
  const tagStart = hidden ? HIDDEN_PREFIX.length : PREFIX.length;
  const tagEnd = tagStart + TAG_CHARACTERS;
  const tag = signature.slice(tagStart, tagEnd);
  let rest = signature.slice(tagEnd);
  if (rest !== '' && !rest.startsWith('.')) return undefined;
  rest = rest.slice(1);
  if (!hidden) return { tag, hidden: undefined, inner: rest };
  // base64url has no '.', so the text ends at the next one.
  const textEnd = rest.indexOf('.');
  const encoded = textEnd < 0 ? rest : rest.slice(0, textEnd);
  if (!/^[A-Za-z0-9_-]*$/.test(encoded)) return undefined;
  return {
    tag,
    hidden: Buffer.from(encoded, 'base64url').toString(),
    inner: textEnd < 0 ? '' : rest.slice(textEnd + 1),
  };
}
