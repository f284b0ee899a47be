/**
 * Many large bodies at once from one key (issue 31): `--bodies` requests of `--megabytes` MB each,
 * every one on a connection of its own and all sent in the same instant, against a fresh service
 * (`mms serve` in a child, service-child.ts) on the loopback. With `--body prompt` (the default)
 * each body is a valid request whose one user message is the whole body long, the costliest body
 * to read: it is parsed whole before anything can refuse it (the prompt is too long for the
 * model's window, a 400), and its text reaches the event loop. With `--body unparsable` the same
 * body lacks its closing quote and brackets: the parse worker refuses it (a 400), so nothing of it
 * reaches the loop but its reading, which isolates what reading bodies costs.
 *
 * Reports every request's outcome counted by status (or by why it got none: a reset, no reply
 * within `--timeout-seconds`, which is a hang), the replies out of the error envelope or a 529
 * without retry-after, the service's peak RSS (VmHWM, process-memory.ts), the longest time
 * between two /health replies (health-watch.ts) and the service's worst event-loop delay.
 *
 *   node --import tsx bench/attack/body-flood.ts [--bodies 100] [--megabytes 30] [--body prompt|unparsable]
 *     [--budget-mb <listen.maxBodyMemoryInFlight in MB>] [--timeout-seconds 180] [--checkout ../mms-main]
 *
 * --budget-mb sets listen.maxBodyMemoryInFlight (a checkout from before it refuses the field: leave
 * it out there); without it the service's default applies, which its start-up line states.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { positiveInteger } from '../command-arguments.js';
import { envelopeViolation } from './envelope-check.js';
import { startHealthWatch } from './health-watch.js';
import { failureOf } from './outcome-table.js';
import { startServiceChild, type ServiceChild } from './service-child.js';
import { isServerError, printSummaryLine } from './summary-line.js';

const { values } = parseArgs({
  options: {
    checkout: { type: 'string' },
    bodies: { type: 'string', default: '100' },
    megabytes: { type: 'string', default: '30' },
    body: { type: 'string', default: 'prompt' },
    'budget-mb': { type: 'string' },
    'timeout-seconds': { type: 'string', default: '180' },
  },
});
const settings = {
  bodies: positiveInteger(values.bodies, 'bodies'),
  megabytes: positiveInteger(values.megabytes, 'megabytes'),
  budgetMb: values['budget-mb'] === undefined ? undefined : positiveInteger(values['budget-mb'], 'budget-mb'),
  timeoutMs: positiveInteger(values['timeout-seconds'], 'timeout-seconds') * 1000,
  unparsable: bodyKindIsUnparsable(values.body),
};

function bodyKindIsUnparsable(kind: string): boolean {
  if (kind !== 'prompt' && kind !== 'unparsable') throw new Error(`--body must be prompt or unparsable, got ${kind}`);
  return kind === 'unparsable';
}

const MEGABYTE = 1024 * 1024;
const MODEL = 'mid';

/** A request whose one user message fills it to `bytes` bytes; unparsable, without its end. */
function floodBody(bytes: number, unparsable: boolean): Buffer {
  const head = `{"model":"${MODEL}","max_tokens":16,"messages":[{"role":"user","content":"`;
  const tail = unparsable ? ' ' : '"}]}';
  const words = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27)).slice(0, bytes - head.length - tail.length);
  return Buffer.from(`${head}${words}${tail}`);
}

interface Answer {
  /** A status, or why there was none (`ECONNRESET`, `timeout`). */
  outcome: string;
  /** What is wrong with the reply: out of the envelope, a 529 without retry-after. */
  violation: string | undefined;
  /** Milliseconds from the flood's start to the reply. */
  afterMs: number;
}

/**
 * One body on a connection of its own. The reply counts from its head on: a service that refuses
 * a body closes the connection, and a write still going out may then fail after the reply.
 */
function sendBody(service: ServiceChild, body: Buffer, startedAt: number): Promise<Answer> {
  return new Promise((resolve) => {
    let settled = false;
    let replied = false;
    const settle = (answer: Omit<Answer, 'afterMs'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing.destroy();
      resolve({ ...answer, afterMs: performance.now() - startedAt });
    };
    const outgoing = request(
      `${service.baseURL}/v1/messages`,
      { method: 'POST', agent: false, headers: { ...service.headers, 'content-length': body.length } },
      (response) => {
        replied = true;
        const chunks: Buffer[] = [];
        const answered = (): void =>
          settle({
            outcome: String(response.statusCode),
            violation: replyViolation(response.statusCode ?? 0, response.headers, Buffer.concat(chunks)),
          });
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', answered);
        // The connection closed under a reply whose body had come whole, or not: judged as it is.
        response.on('error', answered);
        response.on('close', answered);
      },
    );
    const timer = setTimeout(() => settle({ outcome: 'timeout', violation: undefined }), settings.timeoutMs);
    // After the reply's head, the reply's own events settle (a reset then cuts only the write).
    outgoing.on('error', (error) => {
      if (!replied) settle({ outcome: failureOf(error), violation: undefined });
    });
    outgoing.end(body);
  });
}

function replyViolation(status: number, headers: IncomingHttpHeaders, body: Buffer): string | undefined {
  const single = new Map<string, string>();
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) single.set(name, Array.isArray(value) ? value.join(', ') : value);
  const envelope = envelopeViolation({ status, headers: single, body, closed: true });
  if (envelope !== undefined) return envelope;
  if (status === 529 && !single.has('retry-after')) return '529 without retry-after';
  return undefined;
}

/** The budget the service's start-up line states (absent before issue 31). */
function stateBudget(service: ServiceChild): string {
  const stated = /(\d+) MB of request bodies at once/.exec(service.logTail())?.[1];
  return stated === undefined ? 'none stated' : `${stated} MB`;
}

function countBy(answers: readonly Answer[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { outcome } of answers) counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  return new Map([...counts].sort(([first], [second]) => first.localeCompare(second)));
}

async function main(): Promise<void> {
  const body = floodBody(settings.megabytes * MEGABYTE, settings.unparsable);
  const loadBefore = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  const service = await startServiceChild({
    checkout: values.checkout,
    config: {
      ...(settings.budgetMb === undefined ? {} : { listen: { maxBodyMemoryInFlight: settings.budgetMb * MEGABYTE } }),
      models: [
        {
          id: MODEL,
          tier: 'mid',
          generation: 'newer',
          contextWindow: 200_000,
          maxOutputTokens: 8192,
          backend: { type: 'scripted' },
        },
      ],
    },
  });
  const caseName = `body flood: ${settings.bodies} × ${settings.megabytes} MB ${values.body} bodies at once`;
  try {
    const health = await startHealthWatch(service.baseURL);
    const attackStartedAt = Date.now();
    const startedAt = performance.now();
    const answers = await Promise.all(
      Array.from({ length: settings.bodies }, () => sendBody(service, body, startedAt)),
    );
    const seconds = (performance.now() - startedAt) / 1000;
    const { worstGapMs, failedProbes } = await health.stop();
    const peakRssMb = service.peakRssMb();
    const worstLoopDelayMs = service.worstLoopDelay(attackStartedAt).delayMs;
    const crashed = service.crashed();
    const unanswered = answers.filter((answer) => !/^\d+$/.test(answer.outcome));
    const violations = answers.filter((answer) => answer.violation !== undefined);

    console.log(
      `\n${caseName}, ${values.checkout ?? 'this checkout'}; node ${process.version}; load average before ${loadBefore}`,
    );
    console.log(`budget (listen.maxBodyMemoryInFlight): ${stateBudget(service)}\n`);
    console.log('| outcome | requests |');
    console.log('|---|--:|');
    for (const [outcome, count] of countBy(answers)) console.log(`| ${outcome} | ${count} |`);
    console.log('');
    console.log(`all ended after ${seconds.toFixed(1)} s; the last reply after ${lastReplySeconds(answers)}`);
    console.log(`peak RSS: ${peakRssMb === undefined ? 'n/a' : `${peakRssMb.toFixed(0)} MB`}`);
    console.log(`worst /health gap: ${worstGapMs.toFixed(0)} ms (${failedProbes} failed probes)`);
    console.log(`worst event-loop delay: ${worstLoopDelayMs.toFixed(0)} ms`);
    console.log(`service: ${crashed === undefined ? 'alive' : `died (${crashed})`}`);
    for (const { violation } of violations.slice(0, 5)) console.log(`reply out of contract: ${violation}`);

    printSummaryLine('body-flood', [
      {
        case: caseName,
        crashes: crashed === undefined ? 0 : 1,
        serverErrors: answers.filter((answer) => isServerError(Number(answer.outcome))).length,
        worstStallMs: worstGapMs,
        worstLoopDelayMs,
        peakRssMb: peakRssMb ?? null,
        // A request with no reply (a hang, a reset before any) or a reply out of contract.
        otherFindings: unanswered.length + violations.length,
      },
    ]);
  } finally {
    await service.stop();
  }
}

function lastReplySeconds(answers: readonly Answer[]): string {
  const replied = answers.filter((answer) => /^\d+$/.test(answer.outcome)).map((answer) => answer.afterMs);
  return replied.length === 0 ? 'none' : `${(Math.max(...replied) / 1000).toFixed(1)} s`;
}

await main();
