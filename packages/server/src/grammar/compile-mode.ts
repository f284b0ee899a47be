/**
 * How a compile treats what it cannot express. Exact (a strict tool, or any caller that needs the
 * grammar to be the schema): it refuses, with a GrammarCompileError naming the place. Lenient
 * (issue 35: a tool without `strict`, whose schema is Claude Code's or an MCP server's, full of
 * keywords outside the strict list): it leaves the keyword out, or widens the subschema it cannot
 * compile to its declared types, and records where. A lenient grammar admits every valid text
 * and, where it widened, some invalid ones too, which the check after generation catches
 * (backends/call/output-check.ts).
 */
import { withoutKeywords, type SchemaObject } from '../json-schema/schema-object.js';
import { GrammarCompileError, uncompiledKeyword, uncompiledKeywords } from './schema-reading.js';

export class CompileMode {
  /** Pointers of what a lenient compile left out: empty when the grammar is exactly the schema. */
  readonly widened: string[] = [];

  constructor(readonly lenient: boolean) {}

  /** `schema` as the compiler reads it: refused with a keyword it does not compile (exact), or without that keyword (lenient). */
  readable(schema: SchemaObject, path: string): SchemaObject {
    const uncompiled = uncompiledKeywords(schema);
    if (uncompiled.length === 0) return schema;
    if (!this.lenient) throw uncompiledKeyword(uncompiled[0]!, path);
    for (const keyword of uncompiled) this.widened.push(uncompiledKeyword(keyword, path).path);
    return withoutKeywords(schema, uncompiled);
  }

  /** A subschema failed to compile: the failure stands (exact), or is recorded and the subschema widened by the caller (lenient). */
  widen(error: unknown): void {
    if (!this.lenient || !(error instanceof GrammarCompileError)) throw error;
    this.widened.push(error.path);
  }
}
