/**
 * `$ref` resolution within one schema document, the one resolver behind the grammar compiler and
 * the scripted backend's instance builder. It reads references as Ajv does (protocol's
 * json-schema-validator.ts, which refuses a request whose `$ref` it cannot resolve), so that a
 * reference the request passed names the same schema here:
 *
 *   - `#` (and `#/`, as Ajv reads it) is the root, so a schema may recurse through itself;
 *   - `#/a/b` is a JSON pointer, split at `/` first and then each segment percent-decoded (a
 *     URI fragment's encoding: `%25` is `%`, `%24defs` is `$defs`, `%2F` a `/` inside a key)
 *     and unescaped (`~1` is `/`, `~0` is `~`); array items by index without leading zeros;
 *   - `#name` is the schema whose `$anchor` or `$dynamicAnchor` is `name` (or whose `$id` is
 *     `#name`, the draft-07 form);
 *   - any of these may follow the root's own `$id`. Other documents are not fetched.
 *
 * The answer is the target and its JSON pointer (json-pointer.ts), so that callers name a place
 * one way however a reference spelled it, or a problem saying why there is none; each caller
 * throws its own error with it.
 */
import { childPointer, unescapePointerSegment } from './json-pointer.js';
import { isSchemaObject, type SchemaObject } from './schema-object.js';

export type ReferenceResolution =
  | { readonly target: unknown; readonly pointer: string; readonly problem?: undefined }
  | { readonly target?: undefined; readonly pointer?: undefined; readonly problem: string };

const ROOT_POINTER = '#';

export function resolveReference(root: unknown, reference: unknown): ReferenceResolution {
  if (typeof reference !== 'string') return { problem: `"$ref" must be a string, got ${JSON.stringify(reference)}` };
  const hashIndex = reference.indexOf('#');
  const base = hashIndex < 0 ? reference : reference.slice(0, hashIndex);
  const fragment = hashIndex < 0 ? '' : reference.slice(hashIndex + 1);
  const rootId = isSchemaObject(root) && typeof root.$id === 'string' ? root.$id.replace(/#$/, '') : undefined;
  if (base !== '' && base !== rootId) {
    return { problem: `unsupported "$ref" ${JSON.stringify(reference)} (only references within this schema)` };
  }
  if (fragment === '' || fragment === '/') return { target: root, pointer: ROOT_POINTER };
  if (!fragment.startsWith('/')) return findAnchor(root, fragment, reference);
  return walkPointer(root, fragment, reference);
}

function walkPointer(root: unknown, fragment: string, reference: string): ReferenceResolution {
  const segments: string[] = [];
  for (const encoded of fragment.slice(1).split('/')) {
    try {
      segments.push(unescapePointerSegment(decodeURIComponent(encoded)));
    } catch {
      return { problem: `malformed "$ref" ${JSON.stringify(reference)} (bad percent-encoding)` };
    }
  }
  let current: unknown = root;
  for (const segment of segments) {
    const container: unknown = current;
    if (Array.isArray(container)) current = /^(0|[1-9][0-9]*)$/.test(segment) ? container[Number(segment)] : undefined;
    else current = isSchemaObject(container) && Object.hasOwn(container, segment) ? container[segment] : undefined;
    if (current === undefined) return { problem: `"$ref" target ${pointerOf(segments)} does not exist` };
  }
  return { target: current, pointer: pointerOf(segments) };
}

/** Values under these keywords are data, not schemas, so an `$anchor` inside them means nothing. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(['const', 'enum', 'default', 'examples']);

function findAnchor(root: unknown, name: string, reference: string): ReferenceResolution {
  const pending: Array<{ value: unknown; segments: readonly string[] }> = [{ value: root, segments: [] }];
  const seen = new Set<unknown>();
  while (pending.length > 0) {
    const { value, segments } = pending.pop()!;
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push({ value: item, segments: [...segments, String(index)] }));
      continue;
    }
    const record = value as SchemaObject;
    if (record.$anchor === name || record.$dynamicAnchor === name || record.$id === `#${name}`)
      return { target: record, pointer: pointerOf(segments) };
    for (const [keyword, child] of Object.entries(record))
      if (!DATA_KEYWORDS.has(keyword)) pending.push({ value: child, segments: [...segments, keyword] });
  }
  return { problem: `"$ref" ${JSON.stringify(reference)} names no anchor in this schema` };
}

function pointerOf(segments: readonly string[]): string {
  return childPointer(ROOT_POINTER, ...segments);
}
