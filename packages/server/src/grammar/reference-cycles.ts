/**
 * Left-recursion detection. A `$ref` reached before any token is written (directly, or through
 * other `$ref`s and `anyOf` branches) makes the referring rule start with the referred one; a
 * cycle of those (`{"$ref": "#"}` at the root, say) is left recursion, which llama.cpp refuses
 * with a bare "failed to parse grammar". Such a cycle adds no value to the schema (a = a | b is just
 * b), but rewriting it is not worth the risk, so it is reported here with the pointers involved.
 */
import { GrammarCompileError } from './schema-reading.js';

/** Throws on the first cycle in `headReferences` (rule pointer to the pointers it starts with). */
export function assertNoLeftRecursion(headReferences: ReadonlyMap<string, ReadonlySet<string>>): void {
  const finished = new Set<string>();
  const visit = (pointer: string, trail: readonly string[]): void => {
    if (finished.has(pointer)) return;
    if (trail.includes(pointer)) {
      const cycle = [...trail.slice(trail.indexOf(pointer)), pointer].join(' -> ');
      throw new GrammarCompileError(
        pointer,
        `unsupported "$ref" cycle that writes nothing before recursing (${cycle})`,
      );
    }
    for (const target of headReferences.get(pointer) ?? []) visit(target, [...trail, pointer]);
    finished.add(pointer);
  };
  for (const pointer of headReferences.keys()) visit(pointer, []);
}
