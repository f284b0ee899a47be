/**
 * The bad-input fuzz's mutations of a request's JSON body: its values (wrong types, odd numbers,
 * missing and extra fields, `__proto__` keys, duplicate keys, schema bombs) and its size (deep
 * nesting, long strings, many items, up to just over the 32 MB limit). In the order the seeded
 * pick reads them (bad-input-generator.ts): changing it changes every seed's requests.
 */
import {
  bodyMutation,
  clone,
  defaultDraft,
  nested,
  objects,
  places,
  rawMark,
  serialize,
  setAt,
  short,
  type Family,
  type Json,
} from './bad-input-draft.js';
import { EXTRA_KEYS, FIELD_VALUES, ODD_NUMBER_TEXTS, ODD_VALUES, SCHEMA_BOMBS } from './bad-input-values.js';

export const BODY_FAMILIES: Family[] = [
  {
    name: 'none',
    weight: 2,
    mutate: (_random, base) => ({ mutation: 'unchanged', draft: defaultDraft(base, serialize(clone(base.body))) }),
  },
  {
    name: 'odd value',
    weight: 20,
    mutate: bodyMutation('odd value', (random, body) => {
      const place = random.pick(places(body));
      const value = random.pick(ODD_VALUES);
      setAt(place, value);
      return `${place.path} := ${short(value)}`;
    }),
  },
  {
    name: 'odd number text',
    weight: 6,
    mutate: bodyMutation('odd number text', (random, body, raws) => {
      const place = random.pick(places(body));
      const text = random.pick(ODD_NUMBER_TEXTS);
      setAt(place, rawMark(raws, text));
      return `${place.path} := ${short(text)}`;
    }),
  },
  {
    name: 'field value',
    weight: 14,
    mutate: bodyMutation('field value', (random, body) => {
      const field = random.pick(Object.keys(FIELD_VALUES));
      const value = random.pick(FIELD_VALUES[field]!);
      body[field] = value;
      return `${field} := ${short(value)}`;
    }),
  },
  {
    name: 'missing field',
    weight: 8,
    mutate: bodyMutation('missing field', (random, body) => {
      const place = random.pick(places(body));
      if (Array.isArray(place.parent)) place.parent.splice(place.key as number, 1);
      else delete place.parent[place.key as string];
      return place.path;
    }),
  },
  {
    name: 'extra field',
    weight: 8,
    mutate: bodyMutation('extra field', (random, body) => {
      const target = random.pick(objects(body));
      const key = random.pick(EXTRA_KEYS);
      const value = random.pick(ODD_VALUES);
      // defineProperty: assigning `__proto__` would set the prototype, not a key JSON.stringify writes.
      Object.defineProperty(target.value, key, { value, enumerable: true, writable: true, configurable: true });
      return `${target.path}.${short(key)} := ${short(value)}`;
    }),
  },
  {
    name: 'duplicate key',
    weight: 5,
    mutate: (random, base) => {
      const body = clone(base.body);
      const target = random.pick(objects(body).filter((entry) => Object.keys(entry.value).length > 0));
      const key = random.pick(Object.keys(target.value));
      const value = random.pick(ODD_VALUES);
      // The duplicate is written first or last: parsers disagree on which wins.
      const text = JSON.stringify(body);
      const objectText = JSON.stringify(target.value);
      const duplicate = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
      const changed = random.chance(0.5)
        ? `{${duplicate},${objectText.slice(1)}`
        : `${objectText.slice(0, -1)},${duplicate}}`;
      const at = target.path === '(body)' ? 0 : text.indexOf(objectText);
      const bytes = text.slice(0, at) + changed + text.slice(at + objectText.length);
      return {
        mutation: `duplicate key: ${target.path}.${key} also := ${short(value)}`,
        draft: defaultDraft(base, bytes),
      };
    },
  },
  {
    name: 'schema bomb',
    weight: 6,
    mutate: bodyMutation('schema bomb', (random, body) => {
      const schema = random.pick(SCHEMA_BOMBS);
      if (random.chance(0.5)) {
        body.output_config = { format: { type: 'json_schema', schema } };
        return `output_config.format.schema := ${short(schema)}`;
      }
      const strict = random.chance(0.5);
      body.tools = [{ name: 'bomb', description: 'A tool with a hard schema.', strict, input_schema: schema }];
      if (random.chance(0.7)) body.tool_choice = { type: 'tool', name: 'bomb' };
      else delete body.tool_choice;
      // A tool_use block for a tool no longer offered is another error: keep the turns simple.
      body.messages = [{ role: 'user', content: 'call it' }];
      return `tools := [bomb${strict ? ', strict' : ''}] ${short(schema)}${body.tool_choice ? ', forced' : ''}`;
    }),
  },
  {
    name: 'deep nesting',
    weight: 4,
    mutate: bodyMutation('deep nesting', (random, body, raws) => {
      const place = random.pick(places(body));
      const depth = random.pick([64, 127, 128, 129, 200, 10_000, 1_000_000]);
      const kind = random.pick(['array', 'object'] as const);
      setAt(place, rawMark(raws, nested(kind, depth)));
      return `${place.path} := ${kind} nested ${depth} deep`;
    }),
  },
  {
    name: 'long string',
    weight: 3,
    mutate: bodyMutation('long string', (random, body) => {
      const strings = places(body).filter(
        (place) => typeof (place.parent as Record<string | number, Json>)[place.key] === 'string',
      );
      const place = random.pick(strings.length > 0 ? strings : places(body));
      const length = random.pick([70_000, 600_000, 4_000_000]);
      const letters = random.pick(['x', 'ab ', '\u00e9', '\ud83d\ude00', '\\', '"']);
      setAt(place, letters.repeat(Math.ceil(length / letters.length)));
      return `${place.path} := ${short(letters)} × ${length / letters.length}`;
    }),
  },
  {
    name: 'many items',
    weight: 3,
    mutate: bodyMutation('many items', (random, body, raws) => {
      const count = random.pick([1_000, 100_000, 1_000_000]);
      const item = random.pick(['1', '{}', '{"type":"text","text":"a"}', '{"role":"user","content":"a"}', 'null']);
      const place = random.pick(places(body));
      setAt(place, rawMark(raws, `[${`${item},`.repeat(count - 1)}${item}]`));
      return `${place.path} := [${item} × ${count}]`;
    }),
  },
  {
    name: 'size limit',
    weight: 0.4,
    mutate: (random, base) => {
      // Around the 32 MB limit: just under it is parsed (in the worker), just over it is a 413.
      const bytes = random.pick([31 * 1024 * 1024, 32 * 1024 * 1024 + 1, 40 * 1024 * 1024]);
      const body = clone(base.body);
      const filler = 'x'.repeat(bytes - JSON.stringify(body).length - 20);
      body.messages = [{ role: 'user', content: filler }];
      const draft = defaultDraft(base, serialize(body));
      // Over the limit, the 413 goes out while the client is still writing: the reset it then meets
      // (EPIPE) can come before the reply is read, so no reply is a fair outcome there.
      draft.replyOptional = bytes > 32 * 1024 * 1024;
      return { mutation: `size limit: body of ${bytes} bytes`, draft };
    },
  },
];
