/**
 * The bad-input fuzz's mutations of a request's bytes and wire: bad JSON, invalid UTF-8, its
 * content-type, its headers (anthropic-version, anthropic-beta, keys, odd names) and its framing
 * (a content-length that lies, chunked bodies, methods, paths, versions). After the body
 * families in the seeded pick's order (bad-input-generator.ts).
 */
import { ATTACK_API_KEY } from './service-child.js';
import {
  bodyMutation,
  clone,
  defaultDraft,
  places,
  rawMark,
  serialize,
  setAt,
  short,
  type Family,
} from './bad-input-draft.js';

export const WIRE_FAMILIES: Family[] = [
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
