/**
 * Pinned wire constants (spec: Versioning). Server tool type strings carry dates and are
 * re-checked whenever a model changes, so they live here and nowhere else.
 */

/**
 * The version header value the contract defines (spec: Authentication), which this service's own
 * clients send; the service answers every value in API_VERSIONS (api-versions.ts).
 */
export const API_VERSION = '2023-06-01';

/**
 * The spec writes the version header as `vendor-version`; real clients send the maker's name in
 * place of "vendor", so this is the header the official client actually sends.
 */
export const VERSION_HEADER = 'anthropic-version';

/**
 * Names an error's code (docs/errors.md) beside its status, on every error reply of this service.
 * Several codes share a status and a type (a 502 api_error is `model_output_invalid` from mms, a
 * proxy's "Bad Gateway" elsewhere), so a service in front of this one (a `messages-upstream`
 * backend) reads the code from here.
 */
export const ERROR_CODE_HEADER = 'mms-error-code';

/** The types this service's own client sends (spec: server tools), pinned. */
export const SERVER_TOOL_TYPES = {
  webSearch: 'web_search_20260209',
  webFetch: 'web_fetch_20260209',
  codeExecution: 'code_execution_20260521',
} as const;

/**
 * Every dated type under which the service runs each server tool (issue 34): the versions the
 * official SDK 1.x types list whose fields and results this service can honour. Claude Code's
 * WebSearch sends `web_search_20250305`; tool search is offered undated too, as the public API
 * takes it. The versions it cannot honour, and why, are in tool-types.ts.
 */
export const SERVER_TOOL_VERSIONS = {
  webSearch: ['web_search_20250305', 'web_search_20260209', 'web_search_20260318'],
  webFetch: ['web_fetch_20250910', 'web_fetch_20260209', 'web_fetch_20260309', 'web_fetch_20260318'],
  // Python only: the 20250825 and 20260120 versions run bash and file edits (tool-types.ts).
  codeExecution: ['code_execution_20250522', 'code_execution_20260521'],
  toolSearchRegex: ['tool_search_tool_regex_20251119', 'tool_search_tool_regex'],
  toolSearchBm25: ['tool_search_tool_bm25_20251119', 'tool_search_tool_bm25'],
} as const;

export const SERVER_TOOL_NAMES = {
  webSearch: 'web_search',
  webFetch: 'web_fetch',
  codeExecution: 'code_execution',
  toolSearchRegex: 'tool_search_tool_regex',
  toolSearchBm25: 'tool_search_tool_bm25',
} as const;

/**
 * The result block of each server tool, written once (issue 33): the request schema, rule 4's
 * paused turn and the server's tool descriptors read them here.
 */
export const SERVER_TOOL_RESULT_TYPES = [
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'tool_search_tool_result',
] as const;

/** `allowed_callers` values: `direct` (spec) and the code execution tool for programmatic calls. */
export const ALLOWED_CALLERS = ['direct', SERVER_TOOL_TYPES.codeExecution] as const;

/**
 * Tool search's limits, as the public docs give them (issue 34): a regex pattern of at most 200
 * characters, and at most 5 tools referenced by one search (the docs say 3 to 5).
 */
export const TOOL_SEARCH_LIMITS = { maxPatternCharacters: 200, maxResults: 5 } as const;

/**
 * Compaction's trigger (compact_20260112): the public default is 150,000 input tokens; its floor
 * there is 50,000, which is more than the whole window of many models served here, so the floor
 * here is what a summary needs to be worth writing (issue 34; docs/compatibility.md).
 */
export const COMPACTION_TRIGGER = { defaultTokens: 150_000, minTokens: 1_024 } as const;

/** Spec: "Strict schema keywords". Anything else under `strict: true` is a 400. */
export const STRICT_SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'description',
  'title',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
]);

/** Caps that keep one request's schemas cheap to check, compile and generate against. */
export const SCHEMA_LIMITS = {
  maxDepth: 32,
  maxSubschemas: 4096,
  /**
   * Entries in one `properties`, `anyOf`, `$defs`... A validator compiled from about 3,000
   * properties of one object nests past V8's parser stack (Ajv writes one nested block each).
   */
  maxEntries: 1000,
  /**
   * Characters of the names and values a validator is compiled from: every key, and every string
   * outside `description`, `title`, `$comment`, `examples` and `default`. Ajv writes them into
   * generated code; one `required` name of 4,000,000 characters held the event loop 680 ms.
   */
  maxCompiledCharacters: 200_000,
} as const;

/** Deeper JSON than this is refused before any recursive code touches it. */
export const MAX_JSON_DEPTH = 128;

/**
 * JSON values in one request body (json-bounds.ts). The checks before admission cost about a
 * microsecond a value on the event loop (the whole path, for the costliest shape: many short
 * messages), so this many keep one request's stall well under 100 ms; a long agent conversation
 * with a hundred tools holds a few tens of thousands.
 */
export const MAX_JSON_VALUES = 100_000;

/** Body limit for `POST /v1/messages`: above it the answer is 413 request_too_large. */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
