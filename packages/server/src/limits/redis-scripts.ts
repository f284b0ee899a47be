/**
 * The Lua scripts the Redis store runs: each request's check-and-charge and its settling are one
 * script call each, one round trip, atomic across replicas. They follow token-bucket.ts's rules
 * line for line; the tests run the same cases against both stores. Time is Redis's own (TIME),
 * so that replicas whose clocks differ still share one bucket. Floats go back as strings: Redis
 * turns a Lua number in a reply into an integer.
 *
 * The quotas (issue 37) are a count per period in a key named by the period (`tokens-day:
 * 2026-05-01`), which the replica names by its clock (quota-period.ts) and which expires a minute
 * after its period ends; the scripts check and charge them with the buckets, in the same call.
 */
import { CONCURRENT_RETRY_MS, WINDOW_MS } from './token-bucket.js';

/** How long a quota's key outlives its period: the count is gone once a new period has begun. */
const QUOTA_KEY_GRACE_MS = 60_000;

/** Sets `now`: Redis's time in ms, the one clock the replicas share (every script reads it so). */
const REDIS_NOW = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000`;

/**
 * KEYS: the requests, input-tokens and output-tokens buckets (each a full-again time in ms), the
 * set of requests in flight (lease id -> expiry), the day's and the month's quota counts. ARGV:
 * the three limits (0: none), the concurrency limit (0: none), the input tokens, the lease id,
 * the lease's length in ms, the day's and month's quotas (0: none), the ms until the day and the
 * month end. Returns: the refusing limit (0 none, 1-3 a bucket, 4 in flight, 5 the day's quota, 6
 * the month's), the wait in ms ("-1": never), now, the three buckets' full-again times ("" for a
 * bucket the key does not have), and the two quotas' counts after the charge ("" likewise).
 */
export const ADMIT_SCRIPT = `
${REDIS_NOW}
local window = ${WINDOW_MS}
local amounts = {1, tonumber(ARGV[5]), 0}
local refused, wait = 0, 0
local fullAt = {}
for i = 1, 3 do
  local limit = tonumber(ARGV[i])
  if limit > 0 then
    fullAt[i] = math.max(tonumber(redis.call('GET', KEYS[i]) or '0'), now)
    local needed = amounts[i] * window / limit
    if i == 3 then needed = window / limit end
    if needed > window then refused, wait = i, -1 end
    local over = fullAt[i] + needed - now - window
    if wait >= 0 and over > wait then refused, wait = i, over end
  end
end
local concurrent = tonumber(ARGV[4])
if concurrent > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  if redis.call('ZCARD', KEYS[4]) >= concurrent and wait >= 0 and ${CONCURRENT_RETRY_MS} > wait then refused, wait = 4, ${CONCURRENT_RETRY_MS} end
end
local used = {}
for q = 1, 2 do
  local quota = tonumber(ARGV[7 + q])
  if quota > 0 then
    used[q] = tonumber(redis.call('GET', KEYS[4 + q]) or '0')
    local endsIn = tonumber(ARGV[9 + q])
    if amounts[2] + 1 > quota then refused, wait = 4 + q, -1
    elseif wait >= 0 and used[q] + amounts[2] + 1 > quota and endsIn > wait then refused, wait = 4 + q, endsIn end
  end
end
if refused == 0 then
  for q = 1, 2 do
    if used[q] then
      used[q] = redis.call('INCRBY', KEYS[4 + q], amounts[2])
      redis.call('PEXPIRE', KEYS[4 + q], tonumber(ARGV[9 + q]) + ${QUOTA_KEY_GRACE_MS})
    end
  end
  for i = 1, 2 do
    if fullAt[i] then
      fullAt[i] = fullAt[i] + amounts[i] * window / tonumber(ARGV[i])
      redis.call('SET', KEYS[i], fullAt[i], 'PX', math.ceil(fullAt[i] - now) + 1000)
    end
  end
  if concurrent > 0 then
    redis.call('ZADD', KEYS[4], now + tonumber(ARGV[7]), ARGV[6])
    redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[7]))
  end
end
local function text(value) if value then return string.format('%.3f', value) end return '' end
local function count(value) if value then return tostring(value) end return '' end
return {refused, text(wait), text(now), text(fullAt[1]), text(fullAt[2]), text(fullAt[3]), count(used[1]), count(used[2])}
`;

/**
 * KEYS: the output-tokens bucket, the set of requests in flight, the day's and the month's quota
 * counts. ARGV: the output limit (0: none), the output tokens, the lease id ("" for none), the
 * day's and month's quotas (0: none), the ms until the day and the month end.
 */
export const SETTLE_SCRIPT = `
local limit = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
if limit > 0 and tokens > 0 then
  ${REDIS_NOW}
  local fullAt = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now) + tokens * ${WINDOW_MS} / limit
  redis.call('SET', KEYS[1], fullAt, 'PX', math.ceil(fullAt - now) + 1000)
end
for q = 1, 2 do
  if tonumber(ARGV[3 + q]) > 0 and tokens > 0 then
    redis.call('INCRBY', KEYS[2 + q], tokens)
    redis.call('PEXPIRE', KEYS[2 + q], tonumber(ARGV[5 + q]) + ${QUOTA_KEY_GRACE_MS})
  end
end
if ARGV[3] ~= '' then redis.call('ZREM', KEYS[2], ARGV[3]) end
return 0
`;

/**
 * Keeps the leases of requests still in flight: a replica that dies leaves its leases to expire
 * rather than to hold the key's concurrency forever. KEYS: in-flight sets; ARGV: the lease's
 * length in ms, then one lease id per key.
 */
export const RENEW_SCRIPT = `
${REDIS_NOW}
local length = tonumber(ARGV[1])
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], 'XX', now + length, ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], length)
end
return 0
`;

/**
 * Takes back an admission the limiter gave up on before Redis answered (redis-limit-store.ts):
 * the request and input tokens it charged, and its lease. KEYS: the requests and input-tokens
 * buckets, the set of requests in flight, the day's and the month's quota counts. ARGV: the two
 * limits (0: none), the input tokens, the lease id ("" for none), the day's and month's quotas (0:
 * none). Charges add up, so taking one away leaves the others'; a bucket is never given more room
 * than full, nor a quota's count taken below zero (or made again once it expired).
 */
export const WITHDRAW_SCRIPT = `
${REDIS_NOW}
local amounts = {1, tonumber(ARGV[3])}
for i = 1, 2 do
  local limit = tonumber(ARGV[i])
  local fullAt = tonumber(redis.call('GET', KEYS[i]) or '0')
  if limit > 0 and fullAt > now then
    fullAt = math.max(fullAt - amounts[i] * ${WINDOW_MS} / limit, now)
    redis.call('SET', KEYS[i], fullAt, 'PX', math.ceil(fullAt - now) + 1000)
  end
end
for q = 1, 2 do
  if tonumber(ARGV[4 + q]) > 0 and amounts[2] > 0 and redis.call('EXISTS', KEYS[3 + q]) == 1 then
    local left = redis.call('DECRBY', KEYS[3 + q], amounts[2])
    if left < 0 then redis.call('INCRBY', KEYS[3 + q], -left) end
  end
end
if ARGV[4] ~= '' then redis.call('ZREM', KEYS[3], ARGV[4]) end
return 0
`;

/**
 * What the console shows of a key (issue 37), charging nothing. KEYS: as ADMIT_SCRIPT's. Returns
 * now, the three buckets' full-again times ("" when unset), the requests in flight, and the two
 * quotas' counts.
 */
export const READ_SCRIPT = `
${REDIS_NOW}
local values = {string.format('%.3f', now)}
for i = 1, 3 do values[i + 1] = redis.call('GET', KEYS[i]) or '' end
values[5] = tostring(redis.call('ZCOUNT', KEYS[4], now, '+inf'))
for q = 1, 2 do values[5 + q] = redis.call('GET', KEYS[4 + q]) or '' end
return values
`;
