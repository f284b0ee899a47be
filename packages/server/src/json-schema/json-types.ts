/** The `type` keyword's names and what they mean for values and for each other. */
import { isSchemaObject } from './schema-object.js';

export type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

export const JSON_TYPES: readonly JsonType[] = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

export function isJsonType(value: unknown): value is JsonType {
  return JSON_TYPES.includes(value as JsonType);
}

/** Whether `value` is of `type`; every integer is also a number. A name outside JSON_TYPES matches nothing. */
export function valueHasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isSchemaObject(value);
    default:
      return false;
  }
}

/**
 * The types both lists allow, in `first`'s order: `integer` lies within `number`, so it is kept
 * where one side allows integers and the other numbers, and left out beside a shared `number`
 * (which already holds it); it comes last, after the types shared by name.
 */
export function commonTypes<Type extends string>(first: readonly Type[], second: readonly Type[]): Type[] {
  const numeric = (types: readonly Type[]) => types.some((type) => type === 'number' || type === 'integer');
  const shared = first.filter((type) => type !== 'integer' && second.includes(type));
  const integer = [...first, ...second].find((type) => type === 'integer');
  const integerOnly = !shared.some((type) => type === 'number') && numeric(first) && numeric(second);
  return integerOnly && integer !== undefined ? [...shared, integer] : shared;
}
