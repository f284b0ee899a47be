/**
 * `encrypted_content` of a `web_search_result`. In the public API it is opaque to clients: they
 * keep it and send it back, and only the service can read it. Here it is this service's own
 * reversible encoding of the result's text (a version prefix, then base64url of the UTF-8
 * text), so that when a later request carries the block back, the model reads the text again
 * (llama-cpp/chat-history.ts). It is not a secret and not signed: a client that forges one only
 * puts words in a block the model reads as untrusted search content, which it could put in its
 * own turn anyway.
 */

/** Not in the base64url alphabet, so never mistaken for a bare payload; the version allows a change. */
const PREFIX = 'mms1:';

export function encodeSearchContent(text: string): string {
  return PREFIX + Buffer.from(text, 'utf8').toString('base64url');
}

/** The text, or undefined for content this service did not encode (another service's, or damaged). */
export function decodeSearchContent(encrypted: string): string | undefined {
  if (!encrypted.startsWith(PREFIX)) return undefined;
  const payload = encrypted.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]*$/.test(payload)) return undefined;
  return Buffer.from(payload, 'base64url').toString('utf8');
}
