/**
 * windows-1252 where Node's TextDecoder gets it wrong: Node 20 decodes the label (and the
 * Latin-1 labels that mean it on the web) as ISO-8859-1, so bytes 0x80-0x9F, the curly quotes,
 * dashes, euro sign and the like of countless Western pages, come out as C1 control characters
 * (nodejs/node#56542). They are mapped here as the WHATWG Encoding table maps them. A decoder
 * without the bug never yields those controls, except for the five bytes the table leaves
 * undefined, which map to themselves: so this is safe either way.
 */

/** U+0080 to U+009F as windows-1252 reads bytes 0x80 to 0x9F. */
const HIGH_CONTROLS =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

export function fixWindows1252(decoded: string): string {
  return decoded.replace(/[\u0080-\u009f]/g, (control) => HIGH_CONTROLS[control.charCodeAt(0) - 0x80]!);
}
