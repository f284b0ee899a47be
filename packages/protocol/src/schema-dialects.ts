/**
 * The JSON Schema drafts a caller's schema may declare in its root `$schema`, and the Ajv that
 * compiles each, with and without `format` checks (json-schema-validator.ts keeps the instances).
 * No `$schema` is 2020-12.
 * Generators declare older drafts (zod-to-json-schema and Pydantic write draft-07), and a
 * draft's keywords mean different things in another (`items` as an array is a tuple before
 * 2020-12), so each draft compiles with its own Ajv class.
 */
import { createRequire } from 'node:module';
import type { Ajv as AjvDraft07, Options } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { RE2JS } from 're2js';
import { ServiceError } from './errors.js';
import { FORMAT_CHECKS } from './format-checks.js';
import { chargePattern } from './pattern-budget.js';

export type AnyAjv = AjvDraft07 | Ajv2019 | Ajv2020;

/**
 * Ajv and RE2 are loaded at the first compile, not with this module: together they cost about a
 * quarter of a second, which every start of the service would pay, and most requests have no
 * schema. Both are CommonJS, so a require loads them synchronously where they are first needed.
 */
const require = createRequire(import.meta.url);
let libraries:
  | {
      AjvDraft07: typeof AjvDraft07;
      Ajv2019: typeof Ajv2019;
      Ajv2020: typeof Ajv2020;
      RE2JS: typeof RE2JS;
      draft06MetaSchema: object;
    }
  | undefined;

function loaded(): NonNullable<typeof libraries> {
  libraries ??= {
    AjvDraft07: (require('ajv') as typeof import('ajv')).Ajv,
    Ajv2019: (require('ajv/dist/2019.js') as typeof import('ajv/dist/2019.js')).Ajv2019,
    Ajv2020: (require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020,
    RE2JS: (require('re2js') as typeof import('re2js')).RE2JS,
    draft06MetaSchema: require('ajv/dist/refs/json-schema-draft-06.json') as object,
  };
  return libraries;
}

/**
 * Ajv's `code.regExp` hook: each pattern is charged to the compile under way (pattern-budget.ts)
 * before RE2 compiles it. The wrapper must expose `toString()`, Ajv caches on it.
 */
function re2RegExp(pattern: string, flags: string) {
  chargePattern(pattern);
  const { RE2JS } = loaded();
  const compiled = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  return {
    test: (value: string) => compiled.matcher(value).find(),
    toString: () => `/${pattern}/${flags}`,
  };
}

function options(formats: boolean): Options {
  return {
    strict: false,
    allErrors: false,
    // The calling client enforces on answers the constraints that strict schemas cannot carry
    // (issue 5); formats outside FORMAT_CHECKS are not checked. Requests do not check formats.
    validateFormats: formats,
    ...(formats ? { formats: FORMAT_CHECKS } : {}),
    // Callers' schemas are compiled, never registered: a registered `$id` would stay for the
    // life of the process, and a later schema with the same `$id` (another request's, or a
    // second tool's in the same request) would be refused as a duplicate.
    addUsedSchema: false,
    // A schema that fails to compile is the caller's 400; Ajv's own log would print the whole generated code.
    logger: false,
    // Each reference is a function of its own rather than a copy of its target at every use:
    // inlined, one `$defs` entry of 200 properties named by 200 others compiled for 16 s.
    inlineRefs: false,
    // Ajv's optimisation passes over the generated code cost three to five times the code's own
    // generation (1,000 properties: 350 ms against 70) and save little on one validation.
    code: { regExp: re2RegExp as never, optimize: false },
  };
}

export interface Dialect {
  /** The `$schema` URI as the draft's meta-schema names itself, without the trailing `#`. */
  uri: string;
  name: string;
  create: (formats: boolean) => AnyAjv;
}

const DIALECTS: readonly Dialect[] = [
  {
    uri: 'https://json-schema.org/draft/2020-12/schema',
    name: '2020-12',
    create: (formats) => new (loaded().Ajv2020)(options(formats)),
  },
  {
    uri: 'https://json-schema.org/draft/2019-09/schema',
    name: '2019-09',
    create: (formats) => new (loaded().Ajv2019)(options(formats)),
  },
  {
    uri: 'http://json-schema.org/draft-07/schema',
    name: 'draft-07',
    create: (formats) => new (loaded().AjvDraft07)(options(formats)),
  },
  {
    uri: 'http://json-schema.org/draft-06/schema',
    name: 'draft-06',
    // Draft-07 only added keywords to draft-06; Ajv compiles both with one class given the meta-schema.
    create: (formats) => {
      const { AjvDraft07, draft06MetaSchema } = loaded();
      return new AjvDraft07(options(formats)).addMetaSchema(draft06MetaSchema) as AjvDraft07;
    },
  },
];

/**
 * The draft `schema` declares in its root `$schema`, 2020-12 when none; an unknown draft is a 400
 * naming `where`.
 */
export function dialectFor(schema: unknown, where: string): Dialect {
  const declared =
    schema !== null && typeof schema === 'object' ? (schema as Record<string, unknown>).$schema : undefined;
  const dialect =
    declared === undefined
      ? DIALECTS[0]!
      : DIALECTS.find((candidate) => typeof declared === 'string' && declared.replace(/#$/, '') === candidate.uri);
  if (dialect) return dialect;
  const supported = DIALECTS.map((candidate) => `${candidate.name} (${candidate.uri})`).join(', ');
  throw new ServiceError(
    'invalid_request',
    `${where}.$schema: ${JSON.stringify(declared)} is not a supported JSON Schema draft; supported: ${supported}; without $schema a schema is read as 2020-12`,
  );
}
