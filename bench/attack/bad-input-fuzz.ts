/**
 * A generated bad-input fuzz against `mms serve` on the loopback (issue 16): `--count` requests
 * from bad-input-generator.ts (seeded: request N of seed S is the same on every run), sent
 * `--concurrency` at a time over raw sockets while a /health prober runs beside them, for at most
 * `--seconds`. Every reply is checked against docs/errors.md (envelope-check.ts).
 *
 * Findings, each printed with its request and reply: a 5xx (the fuzz never fills the service, so
 * even a 503 or 529 is one), a reply out of the envelope, no reply to a whole request, a
 * connection left open after the reply although the request said `connection: close`, and a
 * crash (the service exiting; the requests in flight are printed, and the fuzz stops). The exit
 * code is 1 when there is any. Then the summary line (summary-line.ts).
 *
 *   node --import tsx bench/attack/bad-input-fuzz.ts [--seed 1] [--count 20000] [--concurrency 8]
 *     [--seconds 300] [--checkout ../mms-main]
 *   node --import tsx bench/attack/bad-input-fuzz.ts --seed 1 --show 1234   # one request's bytes, to replay
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { positiveInteger } from '../command-arguments.js';
import { FAMILY_NAMES, generateRequest, type FuzzRequest } from './bad-input-generator.js';
import { FUZZ_SIGNING_KEY } from './conversation-blocks.js';
import { envelopeViolation } from './envelope-check.js';
import { startHealthWatch } from './health-watch.js';
import { rawExchange, type RawOutcome } from './raw-exchange.js';
import { startServiceChild } from './service-child.js';
import { printSummaryLine } from './summary-line.js';
import { FUZZ_MODEL } from './valid-requests.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    count: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '300' },
    checkout: { type: 'string' },
    show: { type: 'string' },
  },
});
const settings = {
  seed: Number(values.seed),
  count: positiveInteger(values.count, 'count'),
  concurrency: positiveInteger(values.concurrency, 'concurrency'),
  seconds: positiveInteger(values.seconds, 'seconds'),
};
if (!Number.isInteger(settings.seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);

/** A whole request with no reply in this long is a finding (the service's own limits are shorter). */
const REPLY_TIMEOUT_MS = 70_000;
/** Findings of each kind printed in full. */
const SHOWN_FINDINGS = 5;
const SHOWN_BYTES = 400;

interface Finding {
  request: FuzzRequest;
  outcome: RawOutcome;
  why: string;
}

if (values.show !== undefined) {
  const request = generateRequest(settings.seed, Number(values.show));
  process.stderr.write(`${request.mutation}\n`);
  process.stdout.write(request.bytes);
  process.exit(0);
}

/** Printable: the bytes as latin1 with control bytes escaped, cut to SHOWN_BYTES. */
function printable(bytes: Buffer): string {
  const text = bytes.subarray(0, SHOWN_BYTES).toString('latin1');
  const escaped = JSON.stringify(text).slice(1, -1);
  return bytes.length > SHOWN_BYTES ? `${escaped}... (${bytes.length} bytes)` : escaped;
}

function describeOutcome(outcome: RawOutcome): string {
  if ('failure' in outcome) return `no reply: ${outcome.failure}`;
  const { reply } = outcome;
  const headers = [...reply.headers].map(([name, value]) => `${name}: ${value}`).join('; ');
  return `${reply.status} [${headers}] ${printable(reply.body)}`;
}

function printFindings(title: string, findings: readonly Finding[]): void {
  console.log(`\n${title}: ${findings.length}`);
  for (const finding of findings.slice(0, SHOWN_FINDINGS)) {
    console.log(`\n  #${finding.request.index} ${finding.request.mutation}`);
    console.log(`  why: ${finding.why}`);
    console.log(`  request: ${printable(finding.request.bytes)}`);
    console.log(`  reply: ${describeOutcome(finding.outcome)}`);
    console.log(
      `  replay: node --import tsx bench/attack/bad-input-fuzz.ts --seed ${settings.seed} --show ${finding.request.index}`,
    );
  }
}

const loadBefore = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
const service = await startServiceChild({
  checkout: values.checkout,
  // warn: the log keeps the failures (a 5xx's detail) without a line per request.
  logLevel: 'warn',
  config: {
    // The key the conversation shapes sign their blocks with, so that they verify here.
    signingKey: FUZZ_SIGNING_KEY,
    models: [
      {
        id: FUZZ_MODEL,
        tier: 'mid',
        generation: 'newer',
        contextWindow: 200_000,
        maxOutputTokens: 8192,
        backend: { type: 'scripted', concurrency: 32, queue: 64 },
      },
    ],
  },
});
const health = await startHealthWatch(service.baseURL);
const attackStartedAt = Date.now();
const started = performance.now();
const deadline = started + settings.seconds * 1000;
const statusCounts = new Map<string, number>();
const familyCounts = new Map<string, Map<string, number>>();
const serverErrors: Finding[] = [];
const envelopeViolations: Finding[] = [];
const missingReplies: Finding[] = [];
const leftOpen: Finding[] = [];
const inFlight = new Set<FuzzRequest>();
/**
 * When each request was sent and answered (Date.now()), to name the ones behind the worst stall:
 * its description and size, not its bytes, which for 100,000 requests (up to 40 MB each) held
 * more memory than the machine had (issue 31's run was killed at 22 GB).
 */
const timings: { index: number; mutation: string; size: number; sentAt: number; answeredAt: number }[] = [];
let crashedWith: FuzzRequest[] = [];
let next = 0;
let sent = 0;

function count(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function record(request: FuzzRequest, outcome: RawOutcome): void {
  const key = 'reply' in outcome ? String(outcome.reply.status) : `no reply (${outcome.failure})`;
  count(statusCounts, key);
  const perFamily = familyCounts.get(request.family) ?? new Map<string, number>();
  count(perFamily, key);
  familyCounts.set(request.family, perFamily);
  if (!('reply' in outcome)) {
    if (!request.replyOptional) missingReplies.push({ request, outcome, why: outcome.failure });
    return;
  }
  if (outcome.reply.status >= 500) serverErrors.push({ request, outcome, why: `status ${outcome.reply.status}` });
  // A HEAD reply has no body; its headers still carry the request id.
  const violation = request.head
    ? outcome.reply.headers.has('request-id')
      ? undefined
      : 'no request-id header'
    : envelopeViolation(outcome.reply);
  if (violation !== undefined) envelopeViolations.push({ request, outcome, why: violation });
  if (!outcome.reply.closed)
    leftOpen.push({
      request,
      outcome,
      why: 'the connection stayed open after the reply to a `connection: close` request',
    });
}

async function worker(): Promise<void> {
  while (next < settings.count && performance.now() < deadline && service.crashed() === undefined) {
    const request = generateRequest(settings.seed, next);
    next += 1;
    inFlight.add(request);
    const sentAt = Date.now();
    const outcome = await rawExchange(service.port, request.bytes, request.endAfterWrite, REPLY_TIMEOUT_MS);
    const { index, mutation } = request;
    timings.push({ index, mutation, size: request.bytes.length, sentAt, answeredAt: Date.now() });
    sent += 1;
    if (service.crashed() !== undefined) {
      // Every request in flight when the service died is a suspect; the replay finds which.
      if (crashedWith.length === 0) crashedWith = [...inFlight];
      return;
    }
    inFlight.delete(request);
    record(request, outcome);
  }
}

await Promise.all(Array.from({ length: settings.concurrency }, () => worker()));
const seconds = (performance.now() - started) / 1000;
const { worstGapMs, worstGapEndedAt, failedProbes } = await health.stop();
const worstLoopDelay = service.worstLoopDelay(attackStartedAt);
const peakRssMb = service.peakRssMb();
const crash = service.crashed();
const logTail = service.logTail();
await service.stop();

console.log(
  `bad-input fuzz: seed ${settings.seed}, ${sent} of ${settings.count} requests in ${seconds.toFixed(0)} s, concurrency ${settings.concurrency}; node ${process.version}; load average before: ${loadBefore}`,
);
console.log('\n| family | sent | replies |');
console.log('|---|---:|---|');
for (const family of FAMILY_NAMES) {
  const counts = familyCounts.get(family);
  if (counts === undefined) continue;
  const total = [...counts.values()].reduce((sum, value) => sum + value, 0);
  const listed = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => `${key} × ${value}`);
  console.log(`| ${family} | ${total} | ${listed.join(', ')} |`);
}
console.log(
  `\nreplies: ${[...statusCounts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key} × ${value}`)
    .join(', ')}`,
);
// A stall is the service's, not a request's; those in flight during it are where to look.
function printInFlight(what: string, durationMs: number, endedAt: number): void {
  const during = timings.filter(({ sentAt, answeredAt }) => sentAt < endedAt && answeredAt > endedAt - durationMs);
  console.log(`\nin flight during ${what} (${durationMs.toFixed(0)} ms): ${during.length}`);
  for (const { index, mutation, size } of during.slice(0, SHOWN_FINDINGS))
    console.log(`  #${index} ${mutation} (${size} bytes)`);
}
printInFlight('the worst /health gap', worstGapMs, worstGapEndedAt);
printInFlight("the service's worst event-loop delay", worstLoopDelay.delayMs, worstLoopDelay.endedAt);
printFindings('5xx replies', serverErrors);
printFindings('replies out of the error envelope', envelopeViolations);
printFindings('whole requests with no reply', missingReplies);
printFindings('connections left open after the reply to `connection: close`', leftOpen);
if (crash !== undefined) {
  console.log(`\ncrash: the service ended (${crash}); requests in flight then:`);
  for (const request of crashedWith)
    console.log(`  #${request.index} ${request.mutation}\n    request: ${printable(request.bytes)}`);
  console.log(`\nthe service's last log lines:\n${logTail.split('\n').slice(-20).join('\n')}`);
} else if (serverErrors.length > 0) {
  console.log(`\nthe service's last log lines (warn and above):\n${logTail.split('\n').slice(-20).join('\n')}`);
}
console.log(
  `\ncrashes: ${crash === undefined ? 0 : 1}; 5xx: ${serverErrors.length}; envelope violations: ${envelopeViolations.length}; missing replies: ${missingReplies.length}; connections left open: ${leftOpen.length}; worst /health gap ${worstGapMs.toFixed(0)} ms (${failedProbes} failed probes); worst event-loop delay ${worstLoopDelay.delayMs.toFixed(0)} ms; service peak RSS ${peakRssMb?.toFixed(0) ?? 'n/a'} MB`,
);
printSummaryLine('bad-input-fuzz', [
  {
    case: `bad-input fuzz: ${sent} requests, seed ${settings.seed}`,
    crashes: crash === undefined ? 0 : 1,
    serverErrors: serverErrors.length,
    worstStallMs: worstGapMs,
    worstLoopDelayMs: worstLoopDelay.delayMs,
    peakRssMb: peakRssMb ?? null,
    otherFindings: envelopeViolations.length + missingReplies.length + leftOpen.length,
  },
]);
process.exitCode =
  crash !== undefined || serverErrors.length + envelopeViolations.length + missingReplies.length + leftOpen.length > 0
    ? 1
    : 0;
