/**
 * JSON Schema to a GBNF grammar for llama.cpp, so that sampling under the grammar can only
 * produce JSON texts valid against the schema. node-llama-cpp ships its own converter, but it
 * drops `required` (every declared property is written), turns `anyOf` into null-only and lets
 * integers take exponents, so it cannot give that guarantee.
 *
 * Compiled: type (incl. arrays of types), properties, required, additionalProperties, items,
 * minItems/maxItems (up to ITEM_COUNT_LIMIT), enum, const, anyOf, same-document $ref
 * (recursion included: each referenced pointer is one named rule), and, since issue 35,
 * minLength/maxLength/pattern (string-grammar.ts) and integer bounds (integer-range.ts).
 * Annotations (title, description, default, examples, ...) are ignored. `$ref` and `anyOf`
 * beside other keywords are intersected with them (schema-intersection.ts).
 *
 * Two modes (compile-mode.ts). `jsonSchemaToGbnf` is exact: anything else throws
 * GrammarCompileError naming the place, and so do object or array keywords beside enum/const
 * (their intersection is not compiled). `lenientSchemaToGbnf` (issue 35, a tool without
 * `strict`) leaves out what it cannot compile and says where: the grammar holds the keywords it
 * can express (types, required, enums, nesting, lengths, bounds, patterns) and is wider than the
 * schema where it widened, which the check after generation covers.
 *
 * As in JSON Schema, a keyword only constrains values of its own type: `{"properties": ...}`
 * without `type` also accepts strings, numbers and so on. Deliberate narrowings, which make the
 * grammar reject some valid texts but never accept an invalid one: object keys in schema order,
 * enum/const values written compactly as JSON.stringify writes them, capped digits and
 * whitespace (gbnf-primitives.ts), and no absent-additionalProperties extras (object-grammar.ts).
 */
import { compileArray } from './array-grammar.js';
import { CompileMode } from './compile-mode.js';
import { jsonLiteral } from './gbnf-primitives.js';
import { RuleRegistry, nameHint, type RuleTarget } from './gbnf-rules.js';
import { allowedLiterals } from './literal-values.js';
import { compileObject, type NestedCompiler } from './object-grammar.js';
import { hasNumberBounds, integerBounds, integerRangeGbnf, NUMBER_BOUND_KEYWORDS } from './integer-range.js';
import { assertNoLeftRecursion } from './reference-cycles.js';
import { SchemaIntersection } from './schema-intersection.js';
import { compileString, hasStringKeywords } from './string-grammar.js';
import { childPointer } from '../json-schema/json-pointer.js';
import { JSON_TYPES, type JsonType } from '../json-schema/json-types.js';
import { isSchemaObject, type SchemaObject } from '../json-schema/schema-object.js';
import { GrammarCompileError, constrainingKeywords, readTypes, referenceTarget } from './schema-reading.js';

export { GrammarCompileError } from './schema-reading.js';

/** Where a schema sits: its JSON pointer, and the `$ref` rule it starts (undefined inside structures). */
interface Site {
  readonly path: string;
  /** Set while no token has been written yet within the rule of this pointer; feeds left-recursion detection. */
  readonly owner: string | undefined;
  /** The `$ref` rule name this schema's own rule should take, so the grammar has no `a ::= b` aliases. */
  readonly reservedName?: string;
}

function targetOf(site: Site): RuleTarget {
  return { hint: nameHint(site.path), reservedName: site.reservedName, path: site.path };
}

const ROOT_POINTER = '#';

class SchemaCompiler implements NestedCompiler {
  readonly registry = new RuleRegistry();
  /** JSON pointer of each `$ref` target to its rule name. */
  private readonly referenceRules = new Map<string, string>();
  /** Rule pointer to the pointers it refers to before writing any token: a cycle is left recursion. */
  private readonly headReferences = new Map<string, Set<string>>();
  private readonly intersection: SchemaIntersection;
  /** Schemas with siblings being compiled on the current path, to where they were met: meeting one inside itself would never end. */
  private readonly intersecting = new Map<SchemaObject, string>();

  constructor(
    private readonly document: unknown,
    readonly mode: CompileMode,
  ) {
    this.intersection = new SchemaIntersection(document, mode);
  }

  compileDocument(): string {
    // `root` is reserved first so that it is the first rule written, and so that `$ref: "#"` finds it.
    const root = this.registry.reserve('root', ROOT_POINTER);
    this.referenceRules.set(ROOT_POINTER, root);
    this.fillReserved(root, this.document, ROOT_POINTER);
    assertNoLeftRecursion(this.headReferences);
    return this.registry.render();
  }

  compileNested(schema: unknown, path: string): string {
    return this.compile(schema, { path, owner: undefined });
  }

  /**
   * A GBNF atom (rule name, literal or group) matching what `schema` accepts. A lenient compile
   * widens a subschema that fails to the shape of its declared types: the innermost one, as
   * each level catches its own.
   */
  private compile(schema: unknown, site: Site): string {
    try {
      return this.compileExactly(schema, site);
    } catch (error) {
      this.mode.widen(error);
      return this.widenedAtom(schema, site);
    }
  }

  /** Any value of the types `schema` declares (any JSON value when it declares none, or names them wrong). */
  private widenedAtom(schema: unknown, site: Site): string {
    const declared = isSchemaObject(schema) ? schema.type : undefined;
    if (declared === undefined) return this.registry.primitive('value');
    try {
      return this.compileTypes({ type: declared }, { path: site.path, owner: undefined });
    } catch {
      return this.registry.primitive('value');
    }
  }

  private compileExactly(original: unknown, site: Site): string {
    if (original === true) return this.registry.primitive('value');
    if (original === false) throw new GrammarCompileError(site.path, 'schema false accepts no value');
    if (!isSchemaObject(original))
      throw new GrammarCompileError(site.path, 'malformed schema (not an object or boolean)');
    const schema = this.mode.readable(original, site.path);
    const keywords = constrainingKeywords(schema);
    if (keywords.length === 0) return this.registry.primitive('value');
    const combinator = keywords.includes('$ref') || keywords.includes('anyOf');
    if (combinator && keywords.length > 1) return this.compileIntersection(schema, site, original);
    if (keywords.includes('$ref')) return this.compileReference(schema, site);
    if (keywords.includes('anyOf')) return this.compileAnyOf(schema, site);
    if (keywords.includes('enum') || keywords.includes('const')) return this.compileLiterals(schema, keywords, site);
    return this.compileTypes(schema, site);
  }

  /**
   * `$ref` or `anyOf` beside other keywords: all of them hold, so they are compiled as one merged
   * schema. `original` is the schema as the document holds it (a lenient read may be a copy):
   * what recursion is told by.
   */
  private compileIntersection(schema: SchemaObject, site: Site, original: SchemaObject): string {
    const outer = this.intersecting.get(original);
    if (outer !== undefined) {
      throw new GrammarCompileError(outer, 'unsupported recursion through a "$ref" or "anyOf" beside other keywords');
    }
    this.intersecting.set(original, site.path);
    try {
      const merged = this.intersection.withoutSiblings(schema, site.path);
      if (merged === false) throw new GrammarCompileError(site.path, 'no value can satisfy this schema');
      return this.compile(merged, site);
    } finally {
      this.intersecting.delete(original);
    }
  }

  private compileReference(schema: SchemaObject, site: Site): string {
    const { target, pointer } = referenceTarget(this.document, schema, site.path);
    if (site.owner !== undefined) this.recordHeadReference(site.owner, pointer);
    const known = this.referenceRules.get(pointer);
    if (known !== undefined) return known;
    // Named before its body is compiled, so the body may refer to it: that is how recursion works.
    const name = this.registry.reserve(nameHint(pointer), pointer);
    this.referenceRules.set(pointer, name);
    this.fillReserved(name, target, pointer);
    return name;
  }

  private fillReserved(name: string, schema: unknown, pointer: string): void {
    const atom = this.compile(schema, { path: pointer, owner: pointer, reservedName: name });
    // When the schema compiled to a single literal or shared rule, the reserved rule is its alias.
    if (atom !== name) this.registry.fill(name, atom);
  }

  private compileAnyOf(schema: SchemaObject, site: Site): string {
    const branches = schema.anyOf;
    if (!Array.isArray(branches) || branches.length === 0) {
      throw new GrammarCompileError(childPointer(site.path, 'anyOf'), '"anyOf" must be a non-empty array of schemas');
    }
    const alternatives = new Set<string>();
    branches.forEach((branch: unknown, index) => {
      // A false branch accepts nothing, so it adds nothing to the union.
      if (branch === false) return;
      alternatives.add(
        this.compile(branch, { path: childPointer(site.path, 'anyOf', String(index)), owner: site.owner }),
      );
    });
    return this.alternation(targetOf(site), [...alternatives], site.path);
  }

  private compileLiterals(schema: SchemaObject, keywords: readonly string[], site: Site): string {
    refuseSiblings(keywords, ['enum', 'const', 'type'], site.path);
    const values = allowedLiterals(schema, readTypes(schema, site.path), site.path);
    return this.alternation(targetOf(site), values.map(jsonLiteral), site.path);
  }

  private compileTypes(schema: SchemaObject, site: Site): string {
    const declared = readTypes(schema, site.path) ?? JSON_TYPES;
    // Every integer is a number, so "number" alone covers both.
    const types = [...new Set(declared)].filter((type) => type !== 'integer' || !declared.includes('number'));
    const target = targetOf(site);
    // With several types the union takes the target; each type's own rule gets a suffixed name.
    const typeTarget = (type: JsonType): RuleTarget =>
      types.length > 1 ? { hint: `${target.hint}-${type}`, reservedName: undefined, path: site.path } : target;
    const alternatives = types.map((type) => this.compileType(type, schema, site.path, typeTarget(type)));
    return this.alternation(target, [...new Set(alternatives)], site.path);
  }

  private compileType(type: JsonType, schema: SchemaObject, path: string, target: RuleTarget): string {
    switch (type) {
      case 'object':
        return compileObject(schema, path, target, this);
      case 'array':
        return compileArray(schema, path, target, this);
      case 'string':
        return hasStringKeywords(schema)
          ? compileString(schema, path, target, this.registry)
          : this.registry.primitive(type);
      case 'integer':
        return hasNumberBounds(schema) ? integerRangeGbnf(integerBounds(schema, path)) : this.registry.primitive(type);
      case 'number': {
        // Bounds on fractions are not compiled; on integers they are (integer-range.ts).
        const bound = NUMBER_BOUND_KEYWORDS.find((keyword) => Object.hasOwn(schema, keyword));
        if (bound !== undefined)
          throw new GrammarCompileError(childPointer(path, bound), `unsupported "${bound}" on a number`);
        return this.registry.primitive(type);
      }
      default:
        return this.registry.primitive(type);
    }
  }

  /** One atom for a union: the alternative itself when there is one, else a (memoised) rule. */
  private alternation(target: RuleTarget, alternatives: readonly string[], path: string): string {
    if (alternatives.length === 0) throw new GrammarCompileError(path, 'no value can satisfy this schema');
    if (alternatives.length === 1) return alternatives[0] as string;
    return this.registry.defineTarget(target, alternatives.join(' | '));
  }

  private recordHeadReference(owner: string, target: string): void {
    const targets = this.headReferences.get(owner) ?? new Set<string>();
    targets.add(target);
    this.headReferences.set(owner, targets);
  }
}

/** `enum`/`const` with object or array keywords would need each value checked against them, which is not compiled. */
function refuseSiblings(keywords: readonly string[], allowed: readonly string[], path: string): void {
  const sibling = keywords.find((keyword) => !allowed.includes(keyword));
  if (sibling === undefined) return;
  const anchor = allowed.find((keyword) => keywords.includes(keyword)) ?? allowed[0];
  throw new GrammarCompileError(childPointer(path, sibling), `unsupported "${sibling}" beside "${anchor}"`);
}

/**
 * GBNF text whose root rule accepts exactly the JSON texts valid against `schema` (within the
 * supported keywords and the narrowings documented above). Throws GrammarCompileError, naming the
 * JSON pointer and the construct, for anything it cannot compile faithfully.
 */
export function jsonSchemaToGbnf(schema: unknown): string {
  return new SchemaCompiler(schema, new CompileMode(false)).compileDocument();
}

/** A grammar for `schema` that holds what it can express, and where it does not (compile-mode.ts). */
export interface LenientGrammar {
  text: string;
  /** Pointers of the keywords and subschemas left out: empty when the grammar is exactly the schema. */
  widened: string[];
}

/**
 * The grammar of a schema without `strict` (issue 35): exact where it can be, wider where it
 * cannot. Throws GrammarCompileError only for what no widening mends: a grammar past llama.cpp's
 * parser limits, or left recursion through `$ref`.
 */
export function lenientSchemaToGbnf(schema: unknown): LenientGrammar {
  const mode = new CompileMode(true);
  const text = new SchemaCompiler(schema, mode).compileDocument();
  return { text, widened: [...new Set(mode.widened)] };
}
