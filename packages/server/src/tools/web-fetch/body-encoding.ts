/**
 * A fetched body's bytes as text, in the encoding the page declares, found as a browser finds
 * it (WHATWG Encoding "decode" and the HTML encoding sniffing rules, simplified):
 *  1. a byte order mark: it wins over any label, since a file saved with one is in that
 *     encoding whatever the server says about it;
 *  2. the `charset` of the Content-Type header;
 *  3. for HTML, a `<meta charset>` or `<meta http-equiv="content-type">` in the first 1024
 *     bytes (for XHTML, the XML declaration's `encoding`);
 *  4. else UTF-8.
 * A label TextDecoder does not know falls back to UTF-8. Latin-1 labels read as windows-1252,
 * which is what the web means by them (windows-1252.ts: Node 20 gets that one wrong).
 */
import { TextDecoder } from 'node:util';
import { fixWindows1252 } from './windows-1252.js';

/** How far into an HTML page its `<meta>` declaration is looked for, as the HTML spec's prescan does. */
const PRESCAN_BYTES = 1024;

export function decodeBody(bytes: Uint8Array, contentType: string, isHtml: boolean): string {
  const label =
    byteOrderMark(bytes) ?? headerCharset(contentType) ?? (isHtml ? declaredCharset(bytes) : undefined) ?? 'utf-8';
  const decoder = decoderFor(label);
  const text = decoder.decode(bytes);
  return decoder.encoding === 'windows-1252' ? fixWindows1252(text) : text;
}

function byteOrderMark(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

function headerCharset(contentType: string): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
}

function declaredCharset(bytes: Uint8Array): string | undefined {
  // Latin-1 maps every byte to one character, so an ASCII declaration reads whatever the encoding.
  const start = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, PRESCAN_BYTES)).toString('latin1');
  const declared =
    /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(start)?.[1] ??
    /^\s*<\?xml\b[^>]*\bencoding\s*=\s*["']([\w.:-]+)/i.exec(start)?.[1];
  // A page that could be read as ASCII to find this is not UTF-16, whatever it says (HTML spec).
  return declared !== undefined && /^utf-16/i.test(declared) ? 'utf-8' : declared;
}

function decoderFor(label: string): TextDecoder {
  try {
    return new TextDecoder(label);
  } catch {
    return new TextDecoder('utf-8');
  }
}
