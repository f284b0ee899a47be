/**
 * Many distinct expensive schemas in a row (issue 31): `--count` requests, one at a time, each with
 * a schema no request before it had, against a service in a child process while the /health
 * prober runs. Before issue 31 every tool schema was compiled and kept in a cache of 512 entries
 * whatever their size, and about 28 requests of one non-strict tool with 1,000 regex patterns
 * ended the process (V8 heap out of memory). Cases:
 *
 * - a non-strict tool of 1,000 patterns (`^(a+)+...\pL{1000}...$`, 74 KB): only shown to the model;
 * - an output format of 40 patterns that unroll to 1,000 instructions each, just within the
 *   pattern budget: compiled and kept, so memory must stay bounded as the validators come and go;
 * - a strict tool whose `$defs` entry of 200 properties is named by 200 properties (16 s to
 *   compile when references were inlined).
 *
 * Each reply's status and time, the service's resident memory after each quarter of the requests
 * (flat means that the second half adds no more than a fixed margin: the first quarter is V8's
 * heap finding its size for the garbage each compile leaves), and the worst /health gap.
 * Findings: a 5xx, a reply slower than 2 s, /health silent over 500 ms, memory growing by more
 * than 100 MB over the second half, a crash. Exit 1 on any.
 *
 *   node --import tsx bench/attack/schema-flood.ts [--count 100] [--checkout ../mms-main] [--only strict]
 */
import { parseArgs } from 'node:util';
import { positiveInteger } from '../command-arguments.js';
import { startHealthWatch } from './health-watch.js';
import { memoryKb } from './process-memory.js';
import { startServiceChild, type ServiceChild } from './service-child.js';
import { statusCountRow, statusCountText, type StatusCounts } from './outcome-table.js';
import { printSummaryLine, type SummaryRow } from './summary-line.js';

const { values } = parseArgs({
  options: { count: { type: 'string', default: '100' }, checkout: { type: 'string' }, only: { type: 'string' } },
});
const count = positiveInteger(values.count, 'count');

const REPLY_LIMIT_MS = 2_000;
const HEALTH_LIMIT_MS = 500;
const GROWTH_LIMIT_MB = 100;

const properties = (size: number, value: (index: number) => unknown) =>
  Object.fromEntries(Array.from({ length: size }, (_, index) => [`p${index}`, value(index)]));

const message = { model: 'mid', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] };

interface FloodCase {
  name: string;
  /** Request `seed`'s body: its schema differs from every other seed's. */
  body: (seed: number) => unknown;
}

const CASES: FloodCase[] = [
  {
    name: 'non-strict tool of 1,000 patterns',
    body: (seed) => ({
      ...message,
      tools: [
        {
          name: 'record',
          description: 'Record it.',
          input_schema: {
            type: 'object',
            properties: properties(1000, (index) => ({ type: 'string', pattern: `^(a+)+\\pL{1000}${seed}x${index}$` })),
          },
        },
      ],
    }),
  },
  {
    name: 'output format of 40 patterns of 1,000 instructions',
    body: (seed) => ({
      ...message,
      output_config: {
        format: {
          type: 'json_schema',
          schema: {
            type: 'object',
            properties: properties(40, (index) => ({ type: 'string', pattern: `^${seed}x${index}a{1000}$` })),
          },
        },
      },
    }),
  },
  {
    name: 'strict tool, a $defs entry of 200 properties named 200 times',
    body: (seed) => ({
      ...message,
      tools: [
        {
          name: 'record',
          description: 'Record it.',
          strict: true,
          input_schema: {
            type: 'object',
            properties: properties(200, () => ({ $ref: '#/$defs/wide' })),
            $defs: {
              wide: {
                type: 'object',
                properties: properties(200, (index) => ({ type: 'string', title: `${seed}:${index}` })),
              },
            },
          },
        },
      ],
    }),
  },
];

async function post(service: ServiceChild, body: unknown): Promise<{ status: string; milliseconds: number }> {
  const started = performance.now();
  try {
    const response = await fetch(`${service.baseURL}/v1/messages`, {
      method: 'POST',
      headers: service.headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    await response.arrayBuffer();
    return { status: String(response.status), milliseconds: performance.now() - started };
  } catch (error) {
    return { status: (error as Error).name, milliseconds: performance.now() - started };
  }
}

const rows: SummaryRow[] = [];
let findingsInAll = 0;
for (const entry of CASES.filter((candidate) => values.only === undefined || candidate.name.includes(values.only))) {
  const service = await startServiceChild({
    checkout: values.checkout,
    logLevel: 'warn',
    config: {
      models: [
        {
          id: 'mid',
          tier: 'mid',
          generation: 'newer',
          contextWindow: 200_000,
          maxOutputTokens: 1024,
          backend: { type: 'scripted' },
        },
      ],
    },
  });
  const health = await startHealthWatch(service.baseURL);
  const startedAt = Date.now();
  const statuses: StatusCounts = new Map();
  let slowest = 0;
  /** Resident memory after each quarter of the requests, in MB. */
  const quarters: number[] = [];
  for (let seed = 0; seed < count && service.crashed() === undefined; seed += 1) {
    const { status, milliseconds } = await post(service, entry.body(seed));
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    slowest = Math.max(slowest, milliseconds);
    if ((seed + 1) % Math.ceil(count / 4) === 0 || seed === count - 1)
      quarters.push((memoryKb(service.pid, 'VmRSS') ?? 0) / 1024);
  }
  const { worstGapMs } = await health.stop();
  const findings: string[] = [];
  if (slowest > REPLY_LIMIT_MS) findings.push(`a reply took ${slowest.toFixed(0)} ms`);
  if (worstGapMs > HEALTH_LIMIT_MS) findings.push(`/health was silent for ${worstGapMs.toFixed(0)} ms`);
  const growth = (quarters.at(-1) ?? 0) - (quarters[1] ?? quarters.at(-1) ?? 0);
  if (growth > GROWTH_LIMIT_MB) findings.push(`memory grew by ${growth.toFixed(0)} MB over the second half`);
  const row = statusCountRow(`schemas: ${count} x ${entry.name}`, service, statuses, worstGapMs, startedAt, findings);
  console.log(
    `${count} x ${entry.name}: ${statusCountText(statuses)}; slowest reply ${slowest.toFixed(0)} ms; RSS by quarter ${quarters.map((megabytes) => megabytes.toFixed(0)).join(', ')} MB, peak ${service.peakRssMb()?.toFixed(0)} MB; worst /health gap ${worstGapMs.toFixed(0)} ms${findings.length === 0 ? '' : `\n  FINDINGS: ${findings.join('; ')}`}`,
  );
  findingsInAll += findings.length;
  rows.push(row);
  await service.stop();
}
printSummaryLine('schema-flood', rows);
if (findingsInAll > 0) process.exitCode = 1;
