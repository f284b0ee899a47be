/**
 * Object schemas to GBNF. Members are written in the schema's property order (JavaScript's key
 * order of `properties`, so integer-like names come first), required ones always, optional ones
 * possibly not, then extra members when `additionalProperties` allows them.
 *
 * Optional members make the comma the hard part: a member is preceded by "," only when something
 * came before it. Two rule families handle that (llama.cpp's own converter uses the same idea):
 *   after-k: members k.. when something was already written, each with a leading ",";
 *            a flat sequence, optional members wrapped in `(...)?`.
 *   from-k:  members k.. when nothing was written yet: either member k then after-(k+1), or
 *            (when k is optional) skip it and try from-(k+1).
 * from-k is only needed up to the first required member, which is always written and so ends the
 * "nothing written yet" state. Each rule refers to the next by name, keeping the grammar linear in
 * the number of properties.
 *
 * Absent `additionalProperties`: when the schema declares `properties`, NO extra keys are allowed.
 * The model should only emit declared fields, and a grammar that allows strangers invites it to
 * invent some. Without `properties`, absent means any members: a bare `{"type": "object"}` is a
 * free-form object, and limiting it to `{}` would make it useless. Undeclared names listed in
 * `required` are written (value: the `additionalProperties` schema, else any value).
 */
import { keyExcluding } from './key-exclusion.js';
import { jsonLiteral } from './gbnf-primitives.js';
import type { RuleRegistry, RuleTarget } from './gbnf-rules.js';
import { childPointer } from '../json-schema/json-pointer.js';
import type { SchemaObject } from '../json-schema/schema-object.js';
import { GrammarCompileError, readSchemaMap, readStringList } from './schema-reading.js';

/** What the object compiler needs from the schema compiler: compiling nested value schemas. */
export interface NestedCompiler {
  readonly registry: RuleRegistry;
  /** A GBNF atom (rule name, literal or group) for a schema nested inside an object or array. */
  compileNested(schema: unknown, path: string): string;
}

interface Member {
  readonly name: string;
  readonly required: boolean;
  /** `"name" ws ":" ws value`, a sequence. */
  readonly expression: string;
}

interface MemberLayout {
  readonly members: readonly Member[];
  /** One extra member's sequence, or undefined when no extra keys are allowed. */
  readonly extraMember: string | undefined;
  readonly firstRequired: number;
  readonly ws: string;
  readonly registry: RuleRegistry;
  readonly hint: string;
  /** The object schema's JSON pointer. */
  readonly path: string;
}

function sequence(...parts: readonly string[]): string {
  return parts.filter((part) => part !== '').join(' ');
}

function separated(layout: MemberLayout, expression: string): string {
  return sequence(layout.ws, '","', layout.ws, expression);
}

/** Members from `index` on, each after a comma. */
function membersAfter(layout: MemberLayout, index: number): string {
  if (index === layout.members.length) {
    return layout.extraMember === undefined ? '' : `(${separated(layout, layout.extraMember)})*`;
  }
  const member = layout.members[index] as Member;
  const head = member.required ? separated(layout, member.expression) : `(${separated(layout, member.expression)})?`;
  const body = sequence(head, membersAfter(layout, index + 1));
  // Only the tails that from-k rules also point at are worth a name; later ones stay inline.
  const shared = layout.firstRequired > 0 && index <= layout.firstRequired + 1;
  return shared ? layout.registry.define(`${layout.hint}-after-${index}`, body, layout.path) : body;
}

/** Members from `index` on with nothing written yet: a sequence or a rule name, or undefined when empty. */
function membersFrom(layout: MemberLayout, index: number): string | undefined {
  if (index === layout.members.length) {
    return layout.extraMember === undefined ? undefined : sequence(layout.extraMember, membersAfter(layout, index));
  }
  const member = layout.members[index] as Member;
  const written = sequence(member.expression, membersAfter(layout, index + 1));
  if (member.required) return written;
  const skipped = membersFrom(layout, index + 1);
  if (skipped === undefined) return written;
  return layout.registry.define(`${layout.hint}-from-${index}`, `${written} | ${skipped}`, layout.path);
}

function objectBody(layout: MemberLayout): string {
  const { ws } = layout;
  const content = membersFrom(layout, 0);
  if (content === undefined) return `"{" ${ws} "}"`;
  if (layout.firstRequired < layout.members.length) return `"{" ${ws} ${content} ${ws} "}"`;
  return `"{" ${ws} (${content} ${ws})? "}"`;
}

/** The value atom for extra members, or undefined when none are allowed. */
function extraValue(schema: SchemaObject, path: string, compiler: NestedCompiler): string | undefined {
  const additional = schema.additionalProperties;
  if (additional === undefined) {
    return Object.hasOwn(schema, 'properties') ? undefined : compiler.registry.primitive('value');
  }
  if (additional === false) return undefined;
  if (additional === true) return compiler.registry.primitive('value');
  return compiler.compileNested(additional, childPointer(path, 'additionalProperties'));
}

function memberExpression(name: string, value: string, ws: string): string {
  return sequence(jsonLiteral(name), ws, '":"', ws, value);
}

function declaredMembers(
  schema: SchemaObject,
  path: string,
  extra: string | undefined,
  compiler: NestedCompiler,
): Member[] {
  const ws = compiler.registry.primitive('ws');
  const required = new Set(readStringList(schema, 'required', path));
  const members: Member[] = [];
  for (const [name, propertySchema] of readSchemaMap(schema, 'properties', path)) {
    const propertyPath = childPointer(path, 'properties', name);
    if (propertySchema === false) {
      // A false property may only be absent: fine when optional, impossible when required.
      if (required.has(name))
        throw new GrammarCompileError(propertyPath, `required property "${name}" has schema false`);
      continue;
    }
    const value = compiler.compileNested(propertySchema, propertyPath);
    members.push({ name, required: required.has(name), expression: memberExpression(name, value, ws) });
  }
  const declared = new Set(members.map((member) => member.name));
  for (const name of required) {
    if (declared.has(name)) continue;
    if (schema.additionalProperties === false) {
      throw new GrammarCompileError(
        childPointer(path, 'required'),
        `required property "${name}" is forbidden by additionalProperties: false`,
      );
    }
    const value = extra ?? compiler.registry.primitive('value');
    members.push({ name, required: true, expression: memberExpression(name, value, ws) });
  }
  return members;
}

/**
 * Any string when no name is taken; otherwise any string but the taken names: the declared
 * members, and the properties whose schema is false, which have no member but must not come
 * back as extra keys either.
 */
function extraKey(
  members: readonly Member[],
  forbidden: readonly string[],
  registry: RuleRegistry,
  target: RuleTarget,
): string {
  const names = [...members.map((member) => member.name), ...forbidden];
  return names.length === 0 ? registry.primitive('string') : keyExcluding(names, registry, target.hint, target.path);
}

/** Properties whose schema is false: they may only be absent. */
function forbiddenNames(schema: SchemaObject, path: string): string[] {
  return readSchemaMap(schema, 'properties', path)
    .filter(([, propertySchema]) => propertySchema === false)
    .map(([name]) => name);
}

/** The name of a rule matching the JSON objects valid against an object-typed schema. */
export function compileObject(
  schema: SchemaObject,
  path: string,
  target: RuleTarget,
  compiler: NestedCompiler,
): string {
  const { registry } = compiler;
  const { hint } = target;
  const constrained = ['properties', 'required'].some((keyword) => Object.hasOwn(schema, keyword));
  const additional = schema.additionalProperties;
  // Nothing declared and extras free: exactly the shared any-object rule.
  if (!constrained && (additional === undefined || additional === true)) return registry.primitive('value-object');
  const extra = extraValue(schema, path, compiler);
  const members = declaredMembers(schema, path, extra, compiler);
  const ws = registry.primitive('ws');
  const firstRequiredIndex = members.findIndex((member) => member.required);
  const layout: MemberLayout = {
    members,
    extraMember:
      extra === undefined
        ? undefined
        : sequence(extraKey(members, forbiddenNames(schema, path), registry, target), ws, '":"', ws, extra),
    firstRequired: firstRequiredIndex === -1 ? members.length : firstRequiredIndex,
    ws,
    registry,
    hint,
    path,
  };
  return registry.defineTarget(target, objectBody(layout));
}
