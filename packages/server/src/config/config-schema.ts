/**
 * The service's one JSON config file. Field names are fixed (issue 2) so that configs written
 * today keep working. The published JSON Schema (packages/server/config.schema.json) is
 * generated from this and kept in step by a test.
 */
import { z } from 'zod';
import { MAX_REQUEST_BYTES } from '@model-messages/protocol';
import { backendConfig, type BackendConfig } from '../backends/backend-config.js';
import { fallbackOnlyViolations, withPlacedDefaults } from '../backends/backend-placement.js';
import { balanceConfig, loadEpsilonConfig } from '../backends/fallback/balance-config.js';
import { fallbackConfig } from '../backends/fallback/fallback-config.js';
import { keyConfig, limitsConfig } from './key-config.js';

export const modelConfig = z
  .strictObject({
    id: z.string().min(1).describe('The model identifier clients send.'),
    aliases: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'Other names that resolve to this model. An alias with * is a pattern for ids clients choose themselves: * matches any run of characters (none included), every other character only itself, and the pattern matches the whole name ("claude-*", "*haiku*"; "*" alone takes every name nothing before it takes). A name resolves to a model id first, then to an exact alias, then to the first pattern that matches it, models and their aliases in config order.',
      ),
    displayName: z.string().min(1).optional(),
    listAs: z
      .array(
        z
          .string()
          .min(1)
          .refine((name) => !name.includes('*'), 'must be an exact id, without *'),
      )
      .min(1)
      .optional()
      .describe(
        'The ids GET /v1/models lists for this model, in place of its id (issue 34): Claude Code\'s model picker keeps only ids that begin with claude or anthropic, so list the ids a client should see ("claude-opus-5-5"). Each resolves to this model as an exact alias does.',
      ),
    tier: z.enum(['small', 'mid', 'large']),
    generation: z.enum(['older', 'newer']),
    contextWindow: z.int().min(1).describe('Context window in tokens.'),
    maxOutputTokens: z.int().min(1).describe('Largest max_tokens a request may ask for; at most contextWindow.'),
    maxTokens: z
      .enum(['refuse', 'clamp'])
      .default('refuse')
      .describe(
        'What a request whose max_tokens is above maxOutputTokens gets: refuse, a 400 (the default); clamp, its max_tokens lowered to maxOutputTokens, which the reply says in its mms-max-tokens-clamped header (for clients that ask for more than any model here gives, as Claude Code does).',
      ),
    backend: backendConfig
      .optional()
      .describe('The one engine that serves this model. Give backend or backends, not both.'),
    backends: z
      .array(backendConfig)
      .min(1)
      .optional()
      .describe(
        'Engines in order: with balance "failover" (the default) the first is the primary, the rest are fallbacks for retryable failures before the first output; with another balance, replicas that share the requests. Admission (concurrency, queue) is set on the first only and admits the whole list.',
      ),
    balance: balanceConfig.optional(),
    loadEpsilon: loadEpsilonConfig.optional(),
    fallback: fallbackConfig
      .optional()
      .describe(
        'The health of backends: their circuit breakers and how often they are probed; defaults apply when it is left out.',
      ),
    load: z
      .enum(['eager', 'lazy'])
      .default('eager')
      .describe(
        'When a llama-cpp backend loads its model into memory: eager, as the service starts (the default; a file that cannot be loaded stops the start, and GET /ready answers 503 until every eager model is loaded); lazy, at its first request, which waits for it. Other backends hold nothing to load.',
      ),
  })
  .superRefine((model, context) => {
    if ((model.backend === undefined) === (model.backends === undefined)) {
      context.addIssue({
        code: 'custom',
        path: ['backends'],
        message: 'give exactly one of backend (one engine) and backends (a fallback list)',
      });
    }
    // A model that could be asked for more output than its whole window holds: a client budgeting
    // with the spec's (window - max output - buffer) x 4 would allow no prompt at all (issue 32).
    if (model.maxOutputTokens > model.contextWindow) {
      context.addIssue({
        code: 'custom',
        path: ['maxOutputTokens'],
        message: `${model.maxOutputTokens} is more than contextWindow (${model.contextWindow}); output shares the window with the prompt`,
      });
    }
    // Settings of a list, named on a model without one, would do nothing: refused (issue 36).
    for (const field of ['fallback', 'balance'] as const)
      if (model[field] !== undefined && model.backends === undefined)
        context.addIssue({ code: 'custom', path: [field], message: 'applies only to a model with backends: [...]' });
    if (model.loadEpsilon !== undefined && model.balance !== 'session') {
      context.addIssue({
        code: 'custom',
        path: ['loadEpsilon'],
        message: `applies only to balance "session" (this model's is ${model.balance ?? 'failover, the default'})`,
      });
    }
    // A setting that would be silently ignored is refused instead (shared/ARCHITECTURE.md).
    (model.backends ?? []).slice(1).forEach((config, index) => {
      for (const { field, message } of fallbackOnlyViolations(config))
        context.addIssue({ code: 'custom', path: ['backends', index + 1, field], message });
    });
  })
  // Defaults that depend on a backend's place in its list (backends/backend-placement.ts).
  .transform((model) => ({
    ...model,
    backend: model.backend === undefined ? undefined : withPlacedDefaults([model.backend])[0],
    backends:
      model.backends === undefined ? undefined : withPlacedDefaults(model.backends, model.balance ?? 'failover'),
  }));

/** A model's engines in order: its one `backend`, or its `backends` list. */
export function modelBackends(model: ModelConfig): BackendConfig[] {
  return model.backends ?? (model.backend ? [model.backend] : []);
}

const webFetchConfig = z.strictObject({
  allowNetworks: z
    .array(z.string().regex(/^[0-9a-fA-F.:]+(\/\d{1,3})?$/, 'must be an address or CIDR, e.g. 10.0.0.0/8'))
    .default([])
    .describe('Networks web fetch may reach although they are private or loopback; empty by default.'),
  maxBytes: z
    .int()
    .min(1024)
    .default(10 * 1024 * 1024)
    .describe('Largest page body read; longer pages are cut.'),
  maxRedirects: z.int().min(0).max(10).default(3),
  timeoutMs: z.int().min(100).default(15_000).describe('Connect, headers and body time limit per fetch.'),
  conversionTimeoutMs: z
    .int()
    .min(100)
    .default(30_000)
    .describe(
      'Time limit of turning one HTML page into markdown (about 2 s a megabyte, in a worker thread); past it the page is url_not_accessible.',
    ),
});

/** Where web search looks things up; paths are relative to the config file's folder. */
const webSearchProvider = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('folder'),
    folder: z
      .string()
      .min(1)
      .describe('Folder of .md, .txt and .html documents to index (relative to the config file).'),
    urlBase: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        "A document's URL when it has none of its own (front matter url:, HTML canonical link): urlBase + its path in the folder. Without it: its file:// URL.",
      ),
    indexFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Where the index is saved between starts (relative to the config file); default .mms-search-index.json in the folder.',
      ),
    watch: z
      .boolean()
      .default(true)
      .describe('Watch the folder for changes; false: check it before every search instead.'),
  }),
  z.strictObject({
    type: z.literal('searxng'),
    baseURL: z
      .url({ protocol: /^https?$/ })
      .describe('The SearXNG instance; its JSON format must be enabled (search.formats).'),
  }),
  z.strictObject({
    type: z.literal('brave'),
    apiKey: z.string().min(1).describe('Brave Search API subscription token.'),
    baseURL: z.url({ protocol: /^https?$/ }).default('https://api.search.brave.com'),
  }),
]);

const webSearchConfig = z.strictObject({
  provider: webSearchProvider
    .optional()
    .describe('Without a provider, every search answers the unavailable error block.'),
  maxResults: z.int().min(1).max(20).default(5).describe('Results per search.'),
  maxResultCharacters: z
    .int()
    .min(100)
    .default(2_000)
    .describe("Longest text per result (less when the model's window is tight)."),
  timeoutMs: z.int().min(100).default(10_000).describe('Time limit of one search.'),
});

/** The code execution sandbox (tools/code-execution): Python in one child process per execution. */
export const codeExecutionConfig = z
  .strictObject({
    poolSize: z
      .int()
      .min(0)
      .max(32)
      .default(1)
      .describe(
        'Sandboxes kept loaded and waiting (each about 170 MB); 0 starts one per execution (a cold start of seconds each time).',
      ),
    warmAtStart: z
      .boolean()
      .default(false)
      .describe(
        'Load the pool when the service starts; otherwise on the first execution, so a service that never runs code never loads Python.',
      ),
    maxConcurrent: z.int().min(1).max(256).default(4).describe('Executions running at once; more wait for a slot.'),
    queueTimeoutMs: z
      .int()
      .min(0)
      .default(10_000)
      .describe('How long an execution waits for a slot before its answer is too_many_requests.'),
    timeoutMs: z
      .int()
      .min(100)
      .default(30_000)
      .describe(
        'Running time of one execution, not counting its web_search and web_fetch calls; past it the answer is execution_time_exceeded.',
      ),
    wallTimeoutMs: z
      .int()
      .min(100)
      .optional()
      .describe(
        'Wall-clock time of one execution, its web_search and web_fetch calls included; past it the answer is execution_time_exceeded. Default: 3 x timeoutMs.',
      ),
    startTimeoutMs: z
      .int()
      .min(1000)
      .default(60_000)
      .describe('Time a sandbox may take to load Python before it counts as unavailable.'),
    memoryMb: z
      .int()
      .min(256)
      .default(512)
      .describe(
        "Memory of one sandbox: Python's heap cannot grow past it (a MemoryError), and a sandbox whose resident memory passes it is killed (return code 137).",
      ),
    snapshotFolder: z
      .union([z.string().min(1), z.literal(false)])
      .optional()
      .describe(
        "Where the Python snapshot every sandbox starts from is kept between starts, one per pyodide build and memoryMb (about 30 MB each, the newest 4 kept); it must be the service user's and writable by no one else. Default ~/.cache/mms/python-snapshots; false: made at every start (a few seconds of CPU before the first execution).",
      ),
    cgroupFolder: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A cgroup v2 folder delegated to the service, with the memory controller enabled for its children: each sandbox gets a cgroup there whose memory.max is memoryMb. Unset or unusable (said once in the log): the kernel limits each sandbox's address space instead (docs/deployment.md).",
      ),
    maxOutputBytes: z
      .int()
      .min(1024)
      .default(65_536)
      .describe('Bytes of stdout, and of stderr, kept per execution; the rest is dropped with a note in stderr.'),
    maxFileBytes: z
      .int()
      .min(1024)
      .default(64 * 1024 * 1024)
      .describe('Largest file code may write in its working folder.'),
    maxFolderBytes: z
      .int()
      .min(1024)
      .default(256 * 1024 * 1024)
      .describe(
        'All that code may write in its working folder, each file counted as at least 4 KiB; past it, or past 10,000 entries, the sandbox is killed (return code 137).',
      ),
    maxHostCalls: z
      .int()
      .min(0)
      .default(20)
      .describe('web_search and web_fetch calls one execution may make (max_uses also applies).'),
  })
  .refine((options) => options.wallTimeoutMs === undefined || options.wallTimeoutMs >= options.timeoutMs, {
    path: ['wallTimeoutMs'],
    message: 'must be at least timeoutMs, which it includes',
  });

/**
 * Where the service listens and how long it waits on its clients. Slow or idle clients cost a
 * connection (a file descriptor) each: every wait is bounded, and docs/deployment.md gives the
 * file limit that goes with maxConnections.
 */
const listenConfig = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.int().min(0).max(65535).default(8080),
    maxConnections: z
      .int()
      .min(1)
      .optional()
      .describe(
        "Connections held at once. At the limit a new connection takes the place of the oldest one with no request in flight; when every one has a request in flight, the new one's request is answered 503. Default: the process's open file limit less 256 for the service's own files, at most 4096 (docs/deployment.md).",
      ),
    maxBodyMemoryInFlight: z
      .int()
      .min(2 * MAX_REQUEST_BYTES)
      .optional()
      .describe(
        "Memory request bodies may hold at once, in bytes, by every request together: a body holds twice its length (its bytes, then its parsed request and the prompt made from it) from its first byte until its request ends. A body whose declared length does not fit in what is left is answered 529 (retry-after) before any of it is read, a chunked one once it would pass it; the connection then closes. At least 67108864 (64 MB, what the largest body takes). Default: a sixteenth of the machine's memory (or of the container's limit), at least 256 MB and at most 1 GB (docs/deployment.md).",
      ),
    headersTimeoutMs: z
      .int()
      .min(100)
      .default(10_000)
      .describe("Time a client has to send a request's headers; past it the answer is 408 and the connection closes."),
    requestTimeoutMs: z
      .int()
      .min(100)
      .default(60_000)
      .describe(
        'Time a client has to send a whole request, body included (a 32 MB body at 1 MB/s takes 32 s); past it the answer is 408 and the connection closes.',
      ),
    keepAliveTimeoutMs: z
      .int()
      .min(100)
      .default(72_000)
      .describe(
        "How long an idle keep-alive connection stays open; longer than the usual client pool's and load balancer's idle time.",
      ),
    writeTimeoutMs: z
      .int()
      .min(100)
      .default(30_000)
      .describe(
        'A reply (streamed or JSON) whose writes make no progress this long, because its client stopped reading, is cut off: its connection closes, its generation stops and its admission slot is given back.',
      ),
  })
  .refine((listen) => listen.headersTimeoutMs <= listen.requestTimeoutMs, {
    path: ['headersTimeoutMs'],
    message: 'must be at most requestTimeoutMs, which includes the headers',
  });

/** One client API key, from the config's apiKeys or from MMS_API_KEYS (cli/serve-settings.ts). */
export const apiKey = z.string().min(8, 'an API key must have at least 8 characters');

export const serviceConfig = z.strictObject({
  $schema: z.string().optional(),
  listen: listenConfig.prefault({}),
  apiKeys: z
    .array(apiKey)
    .default([])
    .describe(
      'Plain API keys: each may use every model, with no limits; the log names each key-<8 hex of its SHA-256>.',
    ),
  keys: z
    .array(keyConfig)
    .default([])
    .describe('API keys with an identity: an id, the SHA-256 of the key, the models it may use, its limits.'),
  limits: limitsConfig.prefault({}),
  models: z.array(modelConfig).min(1),
  /** SSE keep-alive: a ping this often while a stream has nothing else to send. */
  pingIntervalMs: z.int().min(100).default(10_000),
  serverTools: z
    .strictObject({
      webFetch: webFetchConfig.prefault({}),
      webSearch: webSearchConfig.prefault({}),
      codeExecution: codeExecutionConfig.prefault({}),
    })
    .prefault({}),
  /** Most backend steps in one turn before the answer is `pause_turn`. */
  maxSteps: z.int().min(1).max(100).default(10),
  unknownFields: z
    .enum(['refuse', 'ignore'])
    .default('refuse')
    .describe(
      'A request field this service does not know: "refuse" answers 400 naming it, as the public API does; "ignore" drops it and names it in the mms-ignored-fields reply header (for clients newer than docs/compatibility.md).',
    ),
  signingKey: z
    .union([
      z.string().min(32, 'must have at least 32 characters'),
      z.array(z.string().min(32, 'must have at least 32 characters')).min(1, 'a list needs at least one key'),
    ])
    .optional()
    .describe(
      'The key that signs thinking blocks, server tool call ids and web search content, so that they verify when they come back (docs/decisions/0014). Replicas must share it. A list rotates keys: the first signs, the others only verify, so that what an old key signed stays good until it is dropped. Without it: a key made at first start and kept in dataFolder.',
    ),
  metrics: z
    .strictObject({
      public: z
        .boolean()
        .default(false)
        .describe(
          'Serve GET /metrics without an API key, for a Prometheus that cannot send one; keep the port off the public network then. Default: the same keys as /v1.',
        ),
    })
    .prefault({})
    .describe('The Prometheus metrics at GET /metrics (docs/deployment.md).'),
  dataFolder: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Where the service keeps its own files (the signing key when signingKey is not set; with the memory limits store, limits.sqlite: the keys' quota counts and the usage history), relative to the config file; default ~/.local/share/mms (env MMS_DATA_FOLDER, which wins over this).",
    ),
});

export type ServiceConfig = z.infer<typeof serviceConfig>;
export type ServiceConfigInput = z.input<typeof serviceConfig>;
export type ModelConfig = z.infer<typeof modelConfig>;
