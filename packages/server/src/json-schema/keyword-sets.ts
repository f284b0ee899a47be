/** Keywords grouped by what they do to the values a schema accepts, for readers that skip or follow them. */

/**
 * Keywords that never change which values are valid and that no `$ref` points through by name:
 * annotations, the dialect, and the definition containers (which matter only through the
 * `$ref`s that point into them).
 */
export const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set([
  'title',
  'description',
  'default',
  'examples',
  '$comment',
  '$schema',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$defs',
  'definitions',
]);

/** Keywords that name a schema for references to find (reference-resolution.ts) and constrain nothing. */
export const IDENTIFIER_KEYWORDS: ReadonlySet<string> = new Set([
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$recursiveAnchor',
]);

/** Keywords whose value is a reference to another schema. */
export const REFERENCE_KEYWORDS: readonly string[] = ['$ref', '$dynamicRef', '$recursiveRef'];
