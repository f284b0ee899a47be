/**
 * Keys with an identity (issue 20): `keys: [{ id, hash, models, limits, admin }]`, and the
 * `limits` section that says where their limit state lives. The config holds a key's SHA-256,
 * never the key (`mms keys new` prints both, once): a leaked config file gives no key away. A
 * fast hash is enough, as the keys it covers are 256 random bits (cli/keys-new.ts), which no
 * dictionary holds; a slow one (bcrypt, scrypt) would cost milliseconds on every request.
 */
import { z } from 'zod';

/** The one hash format: `sha256:` and 64 hex digits. */
export const KEY_HASH_PREFIX = 'sha256:';
const HASH_DIGITS = /^[0-9a-f]{64}$/i;

const perMinute = (what: string) =>
  z
    .int('must be a positive integer')
    .min(1, 'must be a positive integer')
    .optional()
    .describe(`${what} per minute, refilled continuously (a token bucket: docs/deployment.md).`);

/**
 * A quota (issue 37): input and output tokens together over a calendar period, kept in the limits'
 * store (Redis, or the data folder's database) so that a restart does not give it back.
 */
const perPeriod = (period: string) =>
  z
    .int('must be a positive integer')
    .min(1, 'must be a positive integer')
    .optional()
    .describe(
      `Input and output tokens per ${period}: input charged from the count before generation, output once the reply ends; a request is admitted while its input leaves room for one output token. Kept in the limits' store, so a restart keeps the count.`,
    );

export const keyLimitsConfig = z
  .strictObject({
    requestsPerMinute: perMinute('Requests to POST /v1/messages'),
    inputTokensPerMinute: perMinute('Input tokens, charged from the count before generation,'),
    outputTokensPerMinute: perMinute(
      'Output tokens, charged from what was generated once the reply ends (a request is admitted while any are left, so requests admitted together may generate past it; the debt is paid off before the next),',
    ),
    concurrent: z
      .int('must be a positive integer')
      .min(1, 'must be a positive integer')
      .optional()
      .describe(
        'Message requests in flight at once, from the first byte of the request (its body being read, queued or generating).',
      ),
    tokensPerDay: perPeriod('day (UTC, from midnight)'),
    tokensPerMonth: perPeriod('month (UTC, from the first day at midnight)'),
  })
  .refine(
    (limits) =>
      limits.tokensPerDay === undefined ||
      limits.tokensPerMonth === undefined ||
      limits.tokensPerDay <= limits.tokensPerMonth,
    { path: ['tokensPerDay'], message: 'must be at most tokensPerMonth, which includes every day of the month' },
  )
  .describe('Limits of this key; past one the answer is 429 rate_limit_error with retry-after. None: no limit.');

export type KeyLimitsConfig = z.infer<typeof keyLimitsConfig>;

/**
 * What the hash field holds, checked without ever quoting it: a key pasted in by mistake must not
 * end up in an error message, a terminal's scrollback or a supervisor's log.
 */
const keyHash = z
  .string()
  .superRefine((hash, context) => {
    const colon = hash.indexOf(':');
    const scheme = colon < 0 ? undefined : hash.slice(0, colon);
    if (`${scheme}:` === KEY_HASH_PREFIX && HASH_DIGITS.test(hash.slice(colon + 1))) return;
    const problem =
      scheme === 'sha256'
        ? 'a sha256 hash has 64 hex digits after "sha256:"'
        : /^[a-z0-9-]{1,20}$/i.test(scheme ?? '')
          ? `unknown hash format "${scheme}"`
          : 'not a key hash';
    context.addIssue({
      code: 'custom',
      message: `${problem}: write "sha256:" and the key's 64-digit hex SHA-256 (mms keys new --id <id> prints it); the config holds a key's hash, never the key`,
    });
  })
  .transform((hash) => hash.toLowerCase())
  .describe('sha256: and the 64 hex digits of the SHA-256 of the key (mms keys new prints it).');

export const keyConfig = z
  .strictObject({
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
        'must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
      )
      .describe('What the access log, the metrics, GET /v1/usage and the limit store name this key by.'),
    hash: keyHash,
    models: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe(
        'The models this key may use: a model id, or a name as clients send it, with * for any run of characters ("claude-*"). A request passes when the name it sends or the model id it resolves to is listed; any other is answered 403 permission_error. Default: every model.',
      ),
    limits: keyLimitsConfig.optional(),
    admin: z
      .boolean()
      .default(false)
      .describe(
        'This key may read GET /v1/usage and the admin endpoints under /v1/admin/, and open the console (/console).',
      ),
  })
  .describe('An API key with an identity, models and limits (docs/deployment.md, "Keys and limits").');

export type KeyConfig = z.infer<typeof keyConfig>;

const redisStore = z.strictObject({
  type: z.literal('redis'),
  url: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .describe('redis://[user:password@]host:port[/db]; every replica names the same one.'),
  keyPrefix: z.string().min(1).default('mms:limits:').describe('Prefix of the Redis keys the limits keep.'),
  timeoutMs: z
    .int()
    .min(10)
    .default(250)
    .describe(
      'How long Redis may stay silent while a request waits for its answer before the store counts as unreachable (judged after the service has read what Redis sent).',
    ),
});

export const limitsConfig = z
  .strictObject({
    store: z
      .discriminatedUnion('type', [z.strictObject({ type: z.literal('memory') }), redisStore])
      .default({ type: 'memory' })
      .describe(
        'Where limit state lives: memory (this process alone; the default: per-minute limits in memory, quotas and the usage history in a database file in dataFolder), or Redis, so that replicas behind one load balancer enforce one limit and share quotas and usage history.',
      ),
    onStoreError: z
      .enum(['allow', 'refuse'])
      .default('allow')
      .describe(
        "A request whose limits cannot be checked, Redis being unreachable: allow serves it on this replica's own count of the key's limits (the default); refuse answers 503 api_error. Either way it is logged and counted (mms_limit_store_failures_total).",
      ),
  })
  .describe("Where the keys' limits are kept and what happens when that store fails.");

export type LimitsConfig = z.infer<typeof limitsConfig>;
