/**
 * JSON pointers (RFC 6901) as this code writes places in a schema: a URI fragment, `#` for the
 * root and `#/properties/a~1b` below it, with `~` and `/` in a segment escaped as `~0` and `~1`
 * and nothing percent-encoded. Error paths and `$ref` targets are written this way, so one
 * place has one name however a `$ref` spelled it.
 */

export function escapePointerSegment(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

export function unescapePointerSegment(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** `pointer` extended by `segments`, each escaped: `childPointer('#', 'a/b')` is `#/a~1b`. */
export function childPointer(pointer: string, ...segments: readonly string[]): string {
  return [pointer, ...segments.map(escapePointerSegment)].join('/');
}

/** The unescaped segments of a pointer written as above: `#/properties/a~1b` gives `properties`, `a/b`. */
export function pointerSegments(pointer: string): string[] {
  return pointer
    .replace(/^#\/?/, '')
    .split('/')
    .filter((segment) => segment !== '')
    .map(unescapePointerSegment);
}

/**
 * The request field a pointer into a schema names, as error messages write places:
 * `#/properties/a~1b` in the schema at `tools.0.input_schema` is `tools.0.input_schema.properties.a/b`.
 */
export function schemaFieldPath(schemaField: string, pointer: string): string {
  return [schemaField, ...pointerSegments(pointer)].join('.');
}
