/**
 * `encrypted_content` of a `web_search_result`. In the public API it is opaque to clients: they
 * keep it and send it back, and only the service can read it. Here it is this service's own
 * readable encoding of the result's text, with a tag over the result's URL and text
 * (signer.ts): `mms2:<tag>.<base64url of the UTF-8 text>`. It is not a secret: a client
 * can read the text, but cannot change it, or move it to another URL, and still have the model
 * read it as search content (docs/decisions/0014-signed-server-blocks.md).
 *
 * What a model reads of a result is its readable text (tool-kinds/readable-search-results.ts):
 * the text of a result this service made, or of one that came back in a request with a tag that
 * verifies, admitted once by the check on the way in (signed-blocks-check.ts). The call builder
 * reads it there, with no key. Any other content (another service's, an older format, a forgery)
 * has none, and reads as "not readable by this service" (tool-kinds/web-search-kind.ts). It sits
 * with the other signed things, below the tools, since the check on the way in needs it (issue 33).
 */
import { markReadable } from '../tool-kinds/readable-search-results.js';
import type { Signer } from './signer.js';

/** Not in the base64url alphabet, so never mistaken for a bare payload; the version allows a change. */
const PREFIX = 'mms2:';
const PURPOSE = 'search-content/1';

export function encodeSearchContent(signer: Signer, url: string, text: string): string {
  return `${PREFIX}${signer.tag(PURPOSE, [url, text])}.${Buffer.from(text, 'utf8').toString('base64url')}`;
}

/** The text, or undefined unless this service encoded it for this URL. */
export function decodeSearchContent(signer: Signer, url: string, encrypted: string): string | undefined {
  if (!encrypted.startsWith(PREFIX)) return undefined;
  const dot = encrypted.indexOf('.', PREFIX.length);
  const payload = encrypted.slice(dot + 1);
  if (dot < 0 || !/^[A-Za-z0-9_-]*$/.test(payload)) return undefined;
  const text = Buffer.from(payload, 'base64url').toString('utf8');
  return signer.verifies(encrypted.slice(PREFIX.length, dot), PURPOSE, [url, text]) ? text : undefined;
}

/**
 * Admits the readable results of a request's `web_search_tool_result` blocks: each whose
 * content decodes for its URL under this service's key.
 */
export function admitSearchResults(content: unknown, signer: Signer): void {
  if (!Array.isArray(content)) return;
  for (const item of content as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { type, url, encrypted_content: encrypted } = item as Record<string, unknown>;
    if (type !== 'web_search_result' || typeof url !== 'string' || typeof encrypted !== 'string') continue;
    const text = decodeSearchContent(signer, url, encrypted);
    if (text !== undefined) markReadable(item, text);
  }
}
