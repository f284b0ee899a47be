/**
 * The YAML front matter of a markdown document (`---` lines around `key: value` pairs), read
 * just far enough for the search index: `title`, `url` and `date`. Flat scalars only: nested
 * YAML, lists and multi-line values are not needed here, and a full YAML parser is not worth a
 * dependency for three fields.
 */

export interface FrontMatter {
  fields: Record<string, string>;
  /** The document after the front matter (the whole text when there is none). */
  body: string;
}

const OPENING = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSING = /^(?:---|\.\.\.)[ \t]*$/m;

export function readFrontMatter(text: string): FrontMatter {
  const opening = OPENING.exec(text);
  if (!opening) return { fields: {}, body: text };
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) return { fields: {}, body: text };
  const fields: Record<string, string> = {};
  for (const line of rest.slice(0, closing.index).split(/\r?\n/)) {
    const match = /^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$/.exec(line);
    if (!match) continue;
    const value = unquote(match[2]!);
    if (value !== '') fields[match[1]!.toLowerCase()] = value;
  }
  return { fields, body: rest.slice(closing.index + closing[0].length).replace(/^\r?\n/, '') };
}

function unquote(value: string): string {
  const quoted = /^"(.*)"$|^'(.*)'$/.exec(value);
  if (!quoted) return value.replace(/\s+#.*$/, '');
  return quoted[1] !== undefined ? quoted[1].replace(/\\"/g, '"') : quoted[2]!.replace(/''/g, "'");
}
