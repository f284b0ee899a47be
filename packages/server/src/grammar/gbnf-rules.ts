/**
 * The rule table of a grammar being built: hands out unique GBNF rule names, memoises identical
 * rule bodies under one name, and renders the finished grammar with `root` first.
 */
import { pointerSegments } from '../json-schema/json-pointer.js';
import { assertParserLimits } from './gbnf-limits.js';
import { PRIMITIVE_NAMES, PRIMITIVE_RULES, type PrimitiveName } from './gbnf-primitives.js';

/** Long names make no grammar more correct, only harder to read in llama.cpp's error output. */
const NAME_LENGTH_LIMIT = 48;

/** A GBNF identifier (letters, digits, `-`) resembling `hint`. */
export function ruleNameFrom(hint: string): string {
  const cleaned = hint
    .replace(/[^A-Za-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .slice(0, NAME_LENGTH_LIMIT)
    .replace(/^-+|-+$/g, '');
  if (cleaned === '') return 'rule';
  // llama.cpp accepts a leading digit, but a letter keeps the name readable as a name.
  return /^[0-9]/.test(cleaned) ? `r-${cleaned}` : cleaned;
}

/** Pointer segments that only say where the next segment (a name or an index) sits. */
const CONTAINER_KEYWORDS: ReadonlySet<string> = new Set(['properties', '$defs', 'definitions']);

/**
 * A readable rule-name hint for the schema at a JSON pointer: its last two meaningful words, e.g.
 * `#/properties/user/properties/tags/items` gives `tags-item`, `#/$defs/node` gives `node`.
 */
export function nameHint(path: string): string {
  const segments = pointerSegments(path);
  const words: string[] = [];
  for (let index = 0; index < segments.length; index += 1) {
    const segment = segments[index] as string;
    const next = segments[index + 1];
    if ((CONTAINER_KEYWORDS.has(segment) || segment === 'anyOf') && next !== undefined) {
      words.push(segment === 'anyOf' ? `option-${next}` : next);
      index += 1;
    } else if (segment === 'items') words.push('item');
    else if (segment === 'additionalProperties') words.push('extra');
    else words.push(segment);
  }
  return words.length === 0 ? 'root' : words.slice(-2).join('-');
}

/** Where a compiled construct's rule goes: a name reserved for it (a `$ref` target), or a fresh one from the hint. */
export interface RuleTarget {
  readonly hint: string;
  readonly reservedName: string | undefined;
  /** The JSON pointer of the schema the rule is compiled from: what a refusal of the rule names. */
  readonly path: string;
}

export class RuleRegistry {
  /** Rule name to body, in creation order; a reserved rule's body is '' until filled. */
  private readonly bodies = new Map<string, string>();
  /** Rule name to the JSON pointer of the schema it was made for. */
  private readonly paths = new Map<string, string>();
  private readonly nameByBody = new Map<string, string>();
  /** Primitive names are taken from the start, so a `$defs/string` becomes `string-2`, not a clash. */
  private readonly takenNames = new Set<string>(PRIMITIVE_NAMES);
  private readonly usedPrimitives = new Set<PrimitiveName>();

  /** A fresh rule name for a body that is not known yet (a `$ref` target may refer to itself). */
  reserve(hint: string, path: string): string {
    const base = ruleNameFrom(hint);
    let name = base;
    for (let suffix = 2; this.takenNames.has(name); suffix += 1) name = `${base}-${suffix}`;
    this.takenNames.add(name);
    this.bodies.set(name, '');
    this.paths.set(name, path);
    return name;
  }

  fill(name: string, body: string): void {
    this.bodies.set(name, body);
    if (!this.nameByBody.has(body)) this.nameByBody.set(body, name);
  }

  /** The name of a rule with this body, reusing an existing rule when the body is identical. */
  define(hint: string, body: string, path: string): string {
    const existing = this.nameByBody.get(body);
    if (existing !== undefined) return existing;
    const name = this.reserve(hint, path);
    this.fill(name, body);
    return name;
  }

  /** Fills the target's reserved rule, so a `$ref` rule holds its body instead of an alias of it. */
  defineTarget(target: RuleTarget, body: string): string {
    if (target.reservedName === undefined) return this.define(target.hint, body, target.path);
    this.fill(target.reservedName, body);
    return target.reservedName;
  }

  primitive(name: PrimitiveName): string {
    this.markPrimitiveUsed(name);
    return name;
  }

  get ruleCount(): number {
    return this.bodies.size + this.usedPrimitives.size;
  }

  /**
   * The grammar's text. Throws GrammarCompileError, naming the schema a rule was made for, when
   * llama.cpp's parser would refuse the grammar (gbnf-limits.ts).
   */
  render(): string {
    const rules = [...this.bodies].map(([name, body]) => ({ name, body, path: this.paths.get(name)! }));
    // PRIMITIVE_NAMES order, not first-use order, so a grammar's text does not depend on traversal.
    for (const name of PRIMITIVE_NAMES) {
      if (this.usedPrimitives.has(name)) rules.push({ name, body: PRIMITIVE_RULES[name].body, path: '#' });
    }
    assertParserLimits(rules);
    return `${rules.map((rule) => `${rule.name} ::= ${rule.body}`).join('\n')}\n`;
  }

  private markPrimitiveUsed(name: PrimitiveName): void {
    if (this.usedPrimitives.has(name)) return;
    this.usedPrimitives.add(name);
    for (const dependency of PRIMITIVE_RULES[name].uses) this.markPrimitiveUsed(dependency);
  }
}
