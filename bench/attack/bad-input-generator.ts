/**
 * The bad-input fuzz's requests: request `index` of `seed` is one valid request (valid-requests.ts)
 * with one mutation, a family picked by weight: the body's values (wrong types, odd numbers,
 * missing and extra fields, `__proto__` keys, duplicate keys, schema bombs), its size (deep
 * nesting, long strings, many items, up to just over the 32 MB limit), its bytes (bad JSON,
 * invalid UTF-8), its headers (content-type, anthropic-version, anthropic-beta, keys, odd
 * names) or its framing (a content-length that lies, chunked bodies, methods, paths, versions).
 * Every request is written as raw bytes with `connection: close`, so that the service sees
 * exactly what a hostile client would send.
 */
import { SeededRandom } from './seeded-random.js';
import { ATTACK_API_KEY } from './service-child.js';
import { VALID_REQUESTS, type ValidRequest } from './valid-requests.js';

export interface FuzzRequest {
  index: number;
  family: string;
  /** What was done, for the report: `odd value: max_tokens := 1e999`. */
  mutation: string;
  /** The whole request, head and body. */
  bytes: Buffer;
  /** Half-close after writing: the body is shorter than its content-length, or the head never ends. */
  endAfterWrite: boolean;
  /** The client gave up before the request was whole, so no reply is a fair answer. */
  replyOptional: boolean;
  /** A HEAD request: its reply has no body to check. */
  head: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Draft {
  method: string;
  path: string;
  version: string;
  headers: [string, string][];
  body: Buffer;
  /** content-length to send instead of the body's length, or null for none at all. */
  contentLength?: string | null;
  /** Raw text appended after the head instead of the body (chunked encodings). */
  rawBody?: Buffer;
  endAfterWrite?: boolean;
  replyOptional?: boolean;
}

/** Stands in a JSON value for text that JSON.stringify cannot write (1e999, deep nesting, bytes). */
const RAW_MARK = '\u0000raw:';

interface Mutated {
  mutation: string;
  draft: Draft;
}

type Mutation = (random: SeededRandom, base: ValidRequest) => Mutated;

// --- building blocks -----------------------------------------------------------------------

function clone(value: Record<string, unknown>): { [key: string]: Json } {
  return structuredClone(value) as { [key: string]: Json };
}

function defaultDraft(base: ValidRequest, body: Buffer | string): Draft {
  return {
    method: 'POST',
    path: base.path,
    version: 'HTTP/1.1',
    headers: [
      ['host', '127.0.0.1'],
      ['x-api-key', ATTACK_API_KEY],
      ['anthropic-version', '2023-06-01'],
      ['content-type', 'application/json'],
    ],
    body: typeof body === 'string' ? Buffer.from(body) : body,
  };
}

interface Place {
  path: string;
  parent: { [key: string]: Json } | Json[];
  key: string | number;
}

/** Every value in the body, with where it is. */
function places(root: { [key: string]: Json }): Place[] {
  const found: Place[] = [];
  const walk = (value: Json, path: string): void => {
    if (Array.isArray(value))
      value.forEach((item, index) => {
        found.push({ path: `${path}.${index}`, parent: value, key: index });
        walk(item, `${path}.${index}`);
      });
    else if (value !== null && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) {
        found.push({ path: path === '' ? key : `${path}.${key}`, parent: value, key });
        walk(item, path === '' ? key : `${path}.${key}`);
      }
  };
  walk(root, '');
  return found;
}

function objects(root: { [key: string]: Json }): { path: string; value: { [key: string]: Json } }[] {
  const found = [{ path: '(body)', value: root }];
  for (const place of places(root)) {
    const value = (place.parent as Record<string | number, Json>)[place.key];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) found.push({ path: place.path, value });
  }
  return found;
}

function setAt(place: Place, value: Json): void {
  (place.parent as Record<string | number, Json>)[place.key] = value;
}

/** The body as bytes, each raw mark replaced by its text. */
function serialize(body: Json, raws: readonly (string | Buffer)[] = []): Buffer {
  const text = JSON.stringify(body);
  if (raws.length === 0) return Buffer.from(text);
  const parts: Buffer[] = [];
  const marker = /"\\u0000raw:(\d+)"/g;
  let last = 0;
  for (const found of text.matchAll(marker)) {
    parts.push(Buffer.from(text.slice(last, found.index)));
    const raw = raws[Number(found[1])]!;
    parts.push(typeof raw === 'string' ? Buffer.from(raw) : raw);
    last = found.index + found[0].length;
  }
  parts.push(Buffer.from(text.slice(last)));
  return Buffer.concat(parts);
}

function short(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 40)}... (${text.length} chars)` : text;
}

// --- values --------------------------------------------------------------------------------

const ODD_VALUES: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0.000001,
  2 ** 31,
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  1e308,
  -1e308,
  '',
  ' ',
  'x',
  '1e999',
  'NaN',
  'Infinity',
  '-Infinity',
  'null',
  'true',
  '16',
  '2023-06-01',
  'user',
  'assistant',
  'tool',
  'text',
  'image',
  'object',
  'ephemeral',
  '\u0000',
  '\ud83d\ude00',
  '\u202e\u0301',
  'a\nb\r\nc',
  [],
  [null],
  [1, 'a', {}],
  {},
  { type: 'text' },
  { type: 'text', text: '' },
  { type: null },
  { type: 'tool_use' },
  { type: 'object', properties: null },
];

/** Number tokens JSON.stringify never writes, and some it does that parse oddly. */
const ODD_NUMBER_TEXTS = [
  '1e999',
  '-1e999',
  '1e-999',
  '-0',
  '0.0',
  '1.0',
  '1E3',
  '123456789012345678901234567890',
  '0.30000000000000004',
  '9007199254740993',
  '4.9e-324',
  '1' + '0'.repeat(400),
  '0.' + '0'.repeat(400) + '1',
];

const EXTRA_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  ' ',
  '\u0000',
  'type',
  'model',
  'messages',
  'role',
  'stream',
  'max_tokens',
  'cache_control',
  'x'.repeat(1000),
  '$ref',
  'betas',
  'container',
  'mcp_servers',
];

/** Schemas that are costly or impossible to satisfy, for a tool's input_schema or output_config. */
const SCHEMA_BOMBS: Json[] = [
  { type: 'object', properties: { a: { type: 'array', minItems: 1_000_000_000 } }, required: ['a'] },
  { type: 'object', properties: { a: { type: 'string', minLength: 1_000_000_000 } }, required: ['a'] },
  { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } }, required: ['a'] },
  { type: 'object', properties: { a: { type: 'string', pattern: '[' } }, required: ['a'] },
  { type: 'object', properties: { a: { $ref: '#' } }, required: ['a'] },
  { type: 'object', properties: { a: { $ref: '#/properties/a' } }, required: ['a'] },
  {
    type: 'object',
    $defs: { n: { type: 'object', properties: { n: { $ref: '#/$defs/n' } }, required: ['n'] } },
    properties: { n: { $ref: '#/$defs/n' } },
    required: ['n'],
  },
  { type: 'object', properties: { a: { enum: [] } }, required: ['a'] },
  { type: 'object', properties: { a: { allOf: [{ type: 'string' }, { type: 'number' }] } }, required: ['a'] },
  { type: 'object', properties: { a: { type: 'integer', minimum: 1e308, maximum: 1e308 } }, required: ['a'] },
  { type: 'object', properties: { a: { type: 'integer', multipleOf: 1e-300 } }, required: ['a'] },
  { type: 'object', properties: { a: { type: 'number', exclusiveMinimum: 5, exclusiveMaximum: 5 } }, required: ['a'] },
  { type: 'object', properties: { a: { type: 'array', items: false, minItems: 1 } }, required: ['a'] },
  {
    type: 'object',
    properties: { a: { type: 'array', uniqueItems: true, items: { type: 'boolean' }, minItems: 3 } },
    required: ['a'],
  },
  { type: 'object', properties: { a: { type: 'string', format: 'date-time', minLength: 500 } }, required: ['a'] },
  { type: 'object', required: ['missing'], additionalProperties: false },
  { type: 'object', minProperties: 100_000 },
  { type: 'object', properties: { a: { not: {} } }, required: ['a'] },
  { type: 'object', properties: { a: { anyOf: [] } }, required: ['a'] },
  { type: 'object', properties: { a: { type: 'strange' } } },
  { type: 'object', properties: { a: { const: { deep: [1, { x: null }] } } }, required: ['a'] },
  { type: 'object', properties: { a: { if: { type: 'string' }, then: false, else: false } }, required: ['a'] },
  { type: 'object', patternProperties: { '(x+x+)+y': { type: 'string' } }, minProperties: 1 },
  {
    type: 'object',
    properties: { a: { type: 'array', prefixItems: [{ type: 'string' }], items: false, minItems: 2 } },
    required: ['a'],
  },
];

function nested(kind: 'array' | 'object', depth: number): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

// --- mutation families ---------------------------------------------------------------------

function bodyMutation(
  describe: string,
  change: (random: SeededRandom, body: { [key: string]: Json }, raws: (string | Buffer)[]) => string,
): Mutation {
  return (random, base) => {
    const body = clone(base.body);
    const raws: (string | Buffer)[] = [];
    const what = change(random, body, raws);
    return { mutation: `${describe}: ${what}`, draft: defaultDraft(base, serialize(body, raws)) };
  };
}

function rawMark(raws: (string | Buffer)[], raw: string | Buffer): string {
  raws.push(raw);
  return `${RAW_MARK}${raws.length - 1}`;
}

const FIELD_VALUES: Record<string, Json[]> = {
  max_tokens: [0, -1, 1.5, 1e9, 2 ** 53, '16', null, 8193, 2 ** 31],
  model: ['', 'unknown', 'MID', ' mid', 'mid\u0000', 'x'.repeat(5000), 'mid/../mid', '%2e%2e'],
  temperature: [-1, 2, 1.0000001, '0.5', null],
  top_k: [-1, 1e12, 0.5],
  top_p: [1.5, -0.1],
  stream: ['true', 1, null],
  stop_sequences: [[''], ['a'.repeat(100_000)], Array.from({ length: 10_000 }, (_, index) => `s${index}`), 'STOP'],
  system: [[{ type: 'image' }], [{ type: 'text' }], 5, [{ type: 'text', text: 'a', cache_control: { type: 'x' } }]],
  messages: [
    [],
    [{ role: 'assistant', content: 'a' }],
    [{ role: 'user', content: [] }],
    [{ role: 'user' }],
    [{ content: 'x' }],
    'hello',
    [{ role: 'system', content: 'x' }],
  ],
  tool_choice: [
    { type: 'tool', name: 'nope' },
    { type: 'tool' },
    { type: 'any', disable_parallel_tool_use: 'yes' },
    { type: 'none' },
    { type: 'auto', extra: 1 },
  ],
  thinking: [
    { type: 'enabled', budget_tokens: 1023 },
    { type: 'enabled', budget_tokens: 1e12 },
    { type: 'disabled' },
    { type: 'adaptive' },
    { type: 'enabled' },
  ],
  output_config: [
    { format: null },
    { format: { type: 'json_schema' } },
    { format: { type: 'json_schema', schema: { type: 'array' } } },
    { effort: 'high' },
  ],
  tools: [
    [],
    [{ name: 'a' }],
    [{ type: 'web_search_20260209', name: 'other' }],
    [{ type: 'code_execution_20250522', name: 'code_execution' }],
    [{ name: 'bad name!', description: '', input_schema: { type: 'object' } }],
    Array.from({ length: 2000 }, (_, index) => ({
      name: `t${index}`,
      description: 'd',
      input_schema: { type: 'object' },
    })),
  ],
  metadata: [{ user_id: 5 }, { other: 1 }, []],
};

const FAMILIES: { name: string; weight: number; mutate: Mutation }[] = [
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
  {
    name: 'invalid UTF-8',
    weight: 5,
    mutate: bodyMutation('invalid UTF-8', (random, body, raws) => {
      const place = random.pick(places(body));
      const bytes = random.pick([
        Buffer.from([0xff]),
        Buffer.from([0xc3, 0x28]),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from([0xf4, 0x90, 0x80, 0x80]),
        Buffer.from([0xe2, 0x82]),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from('\\ud800'),
        Buffer.from('\\udc00\\ud800'),
        Buffer.from('\\u00'),
        Buffer.from([0x00]),
      ]);
      setAt(place, rawMark(raws, Buffer.concat([Buffer.from('"a'), bytes, Buffer.from('b"')])));
      return `${place.path} := "a${bytes.toString('hex')}b" (bytes in hex)`;
    }),
  },
  {
    name: 'bad JSON',
    weight: 8,
    mutate: (random, base) => {
      const text = JSON.stringify(base.body);
      const at = random.below(text.length);
      const variants: [string, () => string][] = [
        ['cut short', () => text.slice(0, at)],
        [
          'a character replaced',
          () =>
            text.slice(0, at) + random.pick(['{', '}', '[', ']', ',', ':', '"', "'", '\\', 'x']) + text.slice(at + 1),
        ],
        ['trailing comma', () => `${text.slice(0, -1)},}`],
        ['single quotes', () => text.replaceAll('"', "'")],
        ['a comment', () => `/* c */${text}`],
        ['a byte order mark', () => `\ufeff${text}`],
        ['garbage after', () => `${text}}{"x":1}`],
        ['empty', () => ''],
        ['whitespace only', () => ' \n\t '],
        ['null', () => 'null'],
        ['an array', () => `[${text}]`],
        ['a string', () => JSON.stringify(text)],
        ['a number', () => '42'],
        ['NaN literal', () => text.replace(/"max_tokens":\d+/, '"max_tokens":NaN')],
        ['unquoted key', () => text.replace('"model"', 'model')],
        ['two bodies', () => `${text}\n${text}`],
      ];
      const [what, build] = random.pick(variants);
      return {
        mutation: `bad JSON: ${what}${what.includes('character') || what === 'cut short' ? ` at ${at}` : ''}`,
        draft: defaultDraft(base, build()),
      };
    },
  },
  {
    name: 'content-type',
    weight: 4,
    mutate: (random, base) => {
      const draft = defaultDraft(base, serialize(clone(base.body)));
      const value = random.pick([
        undefined,
        '',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'APPLICATION/JSON',
        'application/json-seq',
        'application/jsonx',
        'application/vnd.api+json',
        'application/json, text/plain',
        ';;;',
        'application/json; boundary="',
      ]);
      draft.headers = draft.headers.filter(([name]) => name !== 'content-type');
      if (value !== undefined) draft.headers.push(['content-type', value]);
      return { mutation: `content-type: ${value === undefined ? '(none)' : JSON.stringify(value)}`, draft };
    },
  },
  {
    name: 'headers',
    weight: 10,
    mutate: (random, base) => {
      const draft = defaultDraft(base, serialize(clone(base.body)));
      const without = (name: string): void => {
        draft.headers = draft.headers.filter(([header]) => header !== name);
      };
      const variants: [string, () => void][] = [
        ['no anthropic-version', () => without('anthropic-version')],
        [
          'anthropic-version 2023-01-01',
          () => (without('anthropic-version'), draft.headers.push(['anthropic-version', '2023-01-01'])),
        ],
        ['anthropic-version twice', () => draft.headers.push(['anthropic-version', '2023-06-01'])],
        ['anthropic-version twice, differing', () => draft.headers.push(['anthropic-version', '2024-01-01'])],
        [
          'anthropic-version long',
          () => (without('anthropic-version'), draft.headers.push(['anthropic-version', '2'.repeat(8000)])),
        ],
        [
          'anthropic-beta odd',
          () =>
            draft.headers.push([
              'anthropic-beta',
              random.pick(['', ',', 'x', 'a,b,,c', 'context-1m-2025-08-07', 'files-api-2025-04-14,%%%', '\u00e9']),
            ]),
        ],
        [
          'anthropic-beta many',
          () =>
            draft.headers.push(['anthropic-beta', Array.from({ length: 1000 }, (_, index) => `b${index}`).join(',')]),
        ],
        [
          'anthropic-beta 100 times',
          () => draft.headers.push(...Array.from({ length: 100 }, (): [string, string] => ['anthropic-beta', 'x'])),
        ],
        ['headers over 16 KB', () => draft.headers.push(['x-big', 'x'.repeat(17_000)])],
        [
          '2,000 headers',
          () =>
            draft.headers.push(...Array.from({ length: 2000 }, (_, index): [string, string] => [`x-h${index}`, '1'])),
        ],
        ['no x-api-key', () => without('x-api-key')],
        ['wrong x-api-key', () => (without('x-api-key'), draft.headers.push(['x-api-key', 'wrong']))],
        ['x-api-key twice', () => draft.headers.push(['x-api-key', 'wrong'])],
        ['bearer key', () => (without('x-api-key'), draft.headers.push(['authorization', `Bearer ${ATTACK_API_KEY}`]))],
        ['bearer, no key', () => (without('x-api-key'), draft.headers.push(['authorization', 'Bearer']))],
        ['basic auth', () => (without('x-api-key'), draft.headers.push(['authorization', 'Basic Og==']))],
        ['long x-api-key', () => (without('x-api-key'), draft.headers.push(['x-api-key', 'k'.repeat(10_000)]))],
        ['header name with a space', () => draft.headers.push(['x bad', '1'])],
        ['header value with a control byte', () => draft.headers.push(['x-bad', 'a\u0001b'])],
        ['header value with latin1', () => draft.headers.push(['x-bad', '\u00e9\u00ff'])],
        ['folded header', () => draft.headers.push(['x-fold', 'a\r\n b'])],
        ['empty header name', () => draft.headers.push(['', 'x'])],
        ['no host', () => without('host')],
        ['expect 100-continue', () => draft.headers.push(['expect', '100-continue'])],
        ['expect other', () => draft.headers.push(['expect', 'something'])],
        ['accept event-stream', () => draft.headers.push(['accept', 'text/event-stream'])],
        ['content-encoding gzip', () => draft.headers.push(['content-encoding', 'gzip'])],
        ['request-id given', () => draft.headers.push(['request-id', 'req_forged\u00e9'])],
        [
          'mms-fault',
          () => draft.headers.push(['mms-fault', random.pick(['http-429', 'http-500', 'x', 'http-529', 'disconnect'])]),
        ],
      ];
      const [what, apply] = random.pick(variants);
      apply();
      return { mutation: `headers: ${what}`, draft };
    },
  },
  {
    name: 'framing',
    weight: 8,
    mutate: (random, base) => {
      const body = serialize(clone(base.body));
      const draft = defaultDraft(base, body);
      const variants: [string, () => void][] = [
        [
          'content-length longer than the body, then end',
          () => (
            (draft.contentLength = String(body.length + 100)),
            (draft.endAfterWrite = true),
            (draft.replyOptional = true)
          ),
        ],
        ['content-length shorter than the body', () => (draft.contentLength = String(Math.max(0, body.length - 10)))],
        ['content-length 0', () => (draft.contentLength = '0')],
        ['no content-length, then end', () => ((draft.contentLength = null), (draft.endAfterWrite = true))],
        ['content-length -1', () => (draft.contentLength = '-1')],
        ['content-length abc', () => (draft.contentLength = 'abc')],
        ['content-length 1e3', () => (draft.contentLength = '1e3')],
        [
          'content-length huge',
          () => (
            (draft.contentLength = '99999999999999999999'),
            (draft.endAfterWrite = true),
            (draft.replyOptional = true)
          ),
        ],
        ['content-length twice, differing', () => draft.headers.push(['content-length', String(body.length + 1)])],
        [
          'chunked',
          () => (
            (draft.contentLength = null),
            draft.headers.push(['transfer-encoding', 'chunked']),
            (draft.rawBody = Buffer.concat([
              Buffer.from(`${body.length.toString(16)}\r\n`),
              body,
              Buffer.from('\r\n0\r\n\r\n'),
            ]))
          ),
        ],
        [
          'chunked, bad size',
          () => (
            (draft.contentLength = null),
            draft.headers.push(['transfer-encoding', 'chunked']),
            (draft.rawBody = Buffer.from('zz\r\nabc\r\n0\r\n\r\n'))
          ),
        ],
        [
          'chunked, size larger than sent, then end',
          () => (
            (draft.contentLength = null),
            draft.headers.push(['transfer-encoding', 'chunked']),
            (draft.rawBody = Buffer.from('ffffff\r\n{"a":')),
            (draft.endAfterWrite = true),
            (draft.replyOptional = true)
          ),
        ],
        [
          'chunked, long extension',
          () => (
            (draft.contentLength = null),
            draft.headers.push(['transfer-encoding', 'chunked']),
            (draft.rawBody = Buffer.from(`5;${'e'.repeat(20_000)}\r\nhello\r\n0\r\n\r\n`))
          ),
        ],
        [
          'chunked and content-length',
          () => (
            draft.headers.push(['transfer-encoding', 'chunked']),
            (draft.rawBody = Buffer.concat([
              Buffer.from(`${body.length.toString(16)}\r\n`),
              body,
              Buffer.from('\r\n0\r\n\r\n'),
            ]))
          ),
        ],
        ['transfer-encoding gzip', () => draft.headers.push(['transfer-encoding', 'gzip'])],
        ['method GET with a body', () => (draft.method = 'GET')],
        ['method PUT', () => (draft.method = 'PUT')],
        ['method DELETE', () => (draft.method = 'DELETE')],
        ['method OPTIONS', () => (draft.method = 'OPTIONS')],
        ['method HEAD', () => (draft.method = 'HEAD')],
        ['method PATCH', () => (draft.method = 'PATCH')],
        ['method lower-case post', () => (draft.method = 'post')],
        ['method made up', () => (draft.method = 'FROB')],
        ['method CONNECT', () => ((draft.method = 'CONNECT'), (draft.path = '127.0.0.1:443'))],
        ['path with a query', () => (draft.path += '?beta=true&x=%')],
        ['path with a trailing slash', () => (draft.path += '/')],
        ['path with a double slash', () => (draft.path = draft.path.replace('/v1/', '/v1//'))],
        ['path with bad percent-encoding', () => (draft.path += '%zz')],
        ['path with dot segments', () => (draft.path = '/v1/messages/count_tokens/../../messages')],
        ['path absolute URI', () => (draft.path = `http://127.0.0.1${draft.path}`)],
        ['path *', () => (draft.path = '*')],
        ['path 9,000 characters', () => (draft.path += `?${'q'.repeat(9000)}`)],
        ['path with unicode', () => (draft.path += '/\u00e9')],
        ['HTTP/1.0', () => (draft.version = 'HTTP/1.0')],
        ['HTTP/1.2', () => (draft.version = 'HTTP/1.2')],
        ['HTTP/3.0', () => (draft.version = 'HTTP/3.0')],
        ['no version', () => (draft.version = '')],
        [
          'head never ends, then end',
          () => (
            (draft.rawBody = Buffer.alloc(0)),
            (draft.contentLength = null),
            draft.headers.push(['x-unfinished', '1\r\nx-more: 2']),
            (draft.endAfterWrite = true),
            (draft.replyOptional = true)
          ),
        ],
      ];
      const [what, apply] = random.pick(variants);
      apply();
      return { mutation: `framing: ${what}`, draft };
    },
  },
];

const TOTAL_WEIGHT = FAMILIES.reduce((sum, family) => sum + family.weight, 0);

export const FAMILY_NAMES = FAMILIES.map((family) => family.name);

function pickFamily(random: SeededRandom): (typeof FAMILIES)[number] {
  let left = random.next() * TOTAL_WEIGHT;
  for (const family of FAMILIES) {
    left -= family.weight;
    if (left < 0) return family;
  }
  return FAMILIES.at(-1)!;
}

function requestBytes(draft: Draft): Buffer {
  const headers = [...draft.headers];
  const body = draft.rawBody ?? draft.body;
  if (draft.contentLength !== null) headers.push(['content-length', draft.contentLength ?? String(draft.body.length)]);
  headers.push(['connection', 'close']);
  const requestLine =
    draft.version === '' ? `${draft.method} ${draft.path}` : `${draft.method} ${draft.path} ${draft.version}`;
  const head = [requestLine, ...headers.map(([name, value]) => `${name}: ${value}`)].join('\r\n');
  // The head's own bytes: latin1 keeps a header's \u00e9 one byte, as a client writing bytes would.
  const ended =
    draft.endAfterWrite && draft.rawBody !== undefined && draft.rawBody.length === 0
      ? `${head}\r\n`
      : `${head}\r\n\r\n`;
  return Buffer.concat([Buffer.from(ended, 'latin1'), body]);
}

export function generateRequest(seed: number, index: number): FuzzRequest {
  const random = new SeededRandom(seed, index);
  const base = random.pick(VALID_REQUESTS);
  const family = pickFamily(random);
  const { mutation, draft } = family.mutate(random, base);
  return {
    index,
    family: family.name,
    mutation: `${base.name} (${base.path}), ${mutation}`,
    bytes: requestBytes(draft),
    endAfterWrite: draft.endAfterWrite ?? false,
    replyOptional: draft.replyOptional ?? false,
    head: draft.method === 'HEAD',
  };
}
