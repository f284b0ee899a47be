/**
 * Attacks on the code execution sandbox (issue 16, cases 2 and 3), against `mms serve` in a child
 * process on the loopback (bench/attack/service-child.ts), while a client asks its /health
 * every 10 ms (bench/attack/health-prober.ts). The service runs one scripted model whose script
 * answers each `run <program>` prompt with a code execution of that program, with the default
 * code execution limits (512 MB, 30 s) and room for eight executions at once:
 * - forged-call floods: code that writes `{"type":"call",...}` lines for a function it was not
 *   offered straight to its message channel (fd 3), as fast as it can;
 * - unread-answer floods: the same with calls of a function it was offered (web_fetch), never
 *   reading the answers;
 * - memory hogs (Python 64 MB a step, one 1.5 GB allocation, JavaScript through `import js`),
 *   with the service's event loop held busy for 10 s by the service itself once the hog grows
 *   (the bench-only loop blocker preloaded into the service, bench/attack/loop-blocker.ts).
 *
 *   node --import tsx bench/attack/sandbox-flood.ts [--floods 4] [--only <case name part>] [--checkout ../mms-main]
 *
 * Prints one table: case, outcomes, worst gap between two /health answers, the service's
 * resident memory growth, and the largest sandbox's peak resident memory; then the summary line
 * (summary-line.ts), whose peak RSS is the service's VmHWM so far (one service runs every case). Every attack program
 * bounds itself (40 s of flooding, 2 GB of memory), so a service that stops none of them still
 * ends each case; a case that has not ended after CASE_TIMEOUT_MS is abandoned.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { positiveInteger } from '../command-arguments.js';
import { startHealthWatch } from './health-watch.js';
import { memoryKb } from './process-memory.js';
import { startServiceChild, type ServiceChild } from './service-child.js';
import { isServerError, printSummaryLine, type SummaryRow } from './summary-line.js';

const { values } = parseArgs({
  options: { floods: { type: 'string', default: '4' }, only: { type: 'string' }, checkout: { type: 'string' } },
});
const FLOODS = positiveInteger(values.floods, 'floods');
const MODEL = 'attack-model';
const CASE_TIMEOUT_MS = 120_000;
/** How long the service blocks its own loop once a hog has started to grow. */
const BLOCK_MS = 10_000;
/** A sandbox above this resident size is a hog growing (a loaded, idle one is about 200 MB). */
const GROWING_KB = 300 * 1024;
/** A long name: the answer that names it is as long, for as long as forged calls are answered. */
const FORGED_LINE = JSON.stringify({ type: 'call', id: 1, name: 'n'.repeat(32_000), input: {} });
const UNREAD_LINE = '{"type":"call","id":1,"name":"web_fetch","input":{"url":"http://127.0.0.1:9/"}}';

function flood(line: string): string {
  return `import js, time
fs = js.process.getBuiltinModule("fs")
lines = ${JSON.stringify(`${line}\n`)} * max(1, 96_000 // ${line.length + 1})
end = time.time() + 40
while time.time() < end:
    fs.writeSync(3, lines)
print("flooded for 40 s")`;
}

/**
 * Each hog first takes 128 MB and waits a second: that growth is the bench's cue to block the
 * service's loop (GROWING_KB), so that the rest is allocated while the loop is busy.
 */
const HOG_CUE = `import js, time
cue = b"x" * (128 << 20)
time.sleep(1)`;

const PROGRAMS: Record<string, string> = {
  forged: flood(FORGED_LINE),
  unread: flood(UNREAD_LINE),
  'hog steps': `${HOG_CUE}
chunks = []
for _ in range(30):
    chunks.append(b"x" * (64 << 20))
print("allocated", len(chunks) * 64, "MB")
time.sleep(2)`,
  'hog once': `${HOG_CUE}
block = b"x" * (1536 << 20)
print("allocated", len(block) >> 20, "MB")
time.sleep(2)`,
  'hog js': `${HOG_CUE}
js.eval("globalThis.kept = []; for (let i = 0; i < 30; i++) kept.push(Buffer.alloc(64 << 20, 1))")
print("allocated", js.kept.length * 64, "MB")
time.sleep(2)`,
};

interface Attack {
  program: keyof typeof PROGRAMS;
  count: number;
}

interface AttackCase {
  name: string;
  attacks: Attack[];
  /** Block the service's loop once a sandbox grows past GROWING_KB. */
  blockOnHog: boolean;
}

const CASES: AttackCase[] = [
  { name: `${FLOODS} forged-call floods`, attacks: [{ program: 'forged', count: FLOODS }], blockOnHog: false },
  { name: `${FLOODS} unread-answer floods`, attacks: [{ program: 'unread', count: FLOODS }], blockOnHog: false },
  { name: 'hog, 64 MB steps, loop blocked', attacks: [{ program: 'hog steps', count: 1 }], blockOnHog: true },
  { name: 'hog, one 1.5 GB block, loop blocked', attacks: [{ program: 'hog once', count: 1 }], blockOnHog: true },
  { name: 'hog in JavaScript, loop blocked', attacks: [{ program: 'hog js', count: 1 }], blockOnHog: true },
  {
    name: `hog + ${FLOODS} forged-call floods`,
    attacks: [
      { program: 'hog steps', count: 1 },
      { program: 'forged', count: FLOODS },
    ],
    blockOnHog: false,
  },
];

function writeScript(folder: string): string {
  const path = join(folder, 'script.json');
  const entries = Object.entries(PROGRAMS).map(([name, code]) => ({
    when: `^run ${name}$`,
    steps: [[{ type: 'server_tool_use', name: 'code_execution', input: { code } }], [{ type: 'text', text: 'Done.' }]],
  }));
  writeFileSync(path, JSON.stringify(entries));
  return path;
}

function startService(script: string): Promise<ServiceChild> {
  return startServiceChild({
    checkout: values.checkout,
    loopBlockMs: BLOCK_MS,
    config: {
      models: [
        {
          id: MODEL,
          tier: 'mid',
          generation: 'newer',
          contextWindow: 8192,
          maxOutputTokens: 1024,
          backend: { type: 'scripted', script, concurrency: 64, queue: 64 },
        },
      ],
      serverTools: { codeExecution: { maxConcurrent: 8, poolSize: 4, warmAtStart: true } },
    },
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function httpCall(
  service: ServiceChild,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: '127.0.0.1',
        port: service.port,
        method,
        path,
        agent,
        timeout: CASE_TIMEOUT_MS,
        headers: service.headers,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    call.on('timeout', () => call.destroy(new Error('timed out')));
    call.on('error', reject);
    call.end(body);
  });
}

/** What one execution ended in: the error code, or the return code and the last line of stderr. */
async function runAttack(service: ServiceChild, program: string): Promise<string> {
  try {
    const reply = await httpCall(
      service,
      'POST',
      '/v1/messages',
      JSON.stringify({
        model: MODEL,
        max_tokens: 200,
        messages: [{ role: 'user', content: `run ${program}` }],
        tools: [
          { type: 'code_execution_20260521', name: 'code_execution' },
          { type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 1 },
        ],
      }),
    );
    if (reply.status !== 200) return `HTTP ${reply.status}`;
    const content = (JSON.parse(reply.text) as { content: { type: string; content?: Record<string, unknown> }[] })
      .content;
    const result = content.find((block) => block.type === 'code_execution_tool_result')?.content;
    if (result === undefined) return 'no result block';
    if (result.type !== 'code_execution_result') return String(result.error_code);
    const stdout = String(result.stdout ?? '').trim();
    const lastError = String(result.stderr ?? '')
      .trim()
      .split('\n')
      .at(-1);
    return `rc ${String(result.return_code)}: ${(lastError || stdout).slice(0, 90)}`;
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

/** Whether each pid seen is a sandbox child running a program: a command line does not change. */
const isSandbox = new Map<number, boolean>();

/** The pids of sandbox children now running (any on this machine: run the bench alone). */
function sandboxPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (!isSandbox.has(pid)) {
      let command = '';
      try {
        command = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      } catch {
        // gone meanwhile
      }
      isSandbox.set(pid, command.includes('sandbox-child.mjs') && command.includes('\0run\0'));
    }
    if (isSandbox.get(pid)) pids.push(pid);
  }
  return pids;
}

interface CaseFigures {
  outcomes: string[];
  crashed: boolean;
  peakRssMb: number | undefined;
  worstGapMs: number;
  worstLoopDelayMs: number;
  serviceGrowthMb: number;
  sandboxPeakMb: number;
}

async function runCase(service: ServiceChild, attackCase: AttackCase): Promise<CaseFigures> {
  const before = memoryKb(service.pid, 'VmRSS') ?? 0;
  let servicePeak = before;
  let sandboxPeak = 0;
  let blocked = false;
  const health = await startHealthWatch(service.baseURL);
  const attackStartedAt = Date.now();
  const sampler = setInterval(() => {
    servicePeak = Math.max(servicePeak, memoryKb(service.pid, 'VmRSS') ?? 0);
    for (const pid of sandboxPids()) {
      const peak = memoryKb(pid, 'VmHWM') ?? 0;
      sandboxPeak = Math.max(sandboxPeak, peak);
      if (attackCase.blockOnHog && !blocked && (memoryKb(pid, 'VmRSS') ?? 0) > GROWING_KB) {
        blocked = true;
        service.blockLoop();
      }
    }
  }, 20);
  const runs = attackCase.attacks.flatMap((attack) =>
    Array.from({ length: attack.count }, () => runAttack(service, attack.program)),
  );
  const outcomes = await Promise.all(runs);
  clearInterval(sampler);
  const { worstGapMs } = await health.stop();
  return {
    outcomes,
    crashed: service.crashed() !== undefined,
    peakRssMb: service.peakRssMb(),
    worstGapMs,
    worstLoopDelayMs: service.worstLoopDelay(attackStartedAt).delayMs,
    serviceGrowthMb: (servicePeak - before) / 1024,
    sandboxPeakMb: sandboxPeak / 1024,
  };
}

/** "2x a, 1x b" for the outcomes of one case. */
function tally(outcomes: string[]): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  return [...counts].map(([outcome, count]) => `${count}x ${outcome.replaceAll('|', '/')}`).join('; ');
}

const folder = mkdtempSync(join(tmpdir(), 'mms-attack-'));
const service = await startService(writeScript(folder));
const rows: SummaryRow[] = [];
try {
  // Let the warm pool load before the first case: its start is not what is measured.
  await sleep(8_000);
  console.log('| case | outcomes | worst /health gap | worst loop delay | service RSS growth | largest sandbox peak |');
  console.log('|---|---|--:|--:|--:|--:|');
  for (const attackCase of CASES) {
    if (values.only !== undefined && !attackCase.name.includes(values.only)) continue;
    const figures = await runCase(service, attackCase);
    console.log(
      `| ${attackCase.name} | ${tally(figures.outcomes)} | ${figures.worstGapMs.toFixed(0)} ms | ${figures.worstLoopDelayMs.toFixed(0)} ms | ${figures.serviceGrowthMb.toFixed(0)} MB | ${figures.sandboxPeakMb.toFixed(0)} MB |`,
    );
    rows.push({
      case: `sandbox: ${attackCase.name}`,
      crashes: figures.crashed ? 1 : 0,
      serverErrors: figures.outcomes.filter((outcome) => isServerError(Number(/^HTTP (\d+)$/.exec(outcome)?.[1])))
        .length,
      worstStallMs: figures.worstGapMs,
      worstLoopDelayMs: figures.worstLoopDelayMs,
      peakRssMb: figures.peakRssMb ?? null,
    });
    if (figures.crashed) break;
    // The pool refills between cases, so that each starts from warm sandboxes.
    await sleep(5_000);
  }
} finally {
  await service.stop();
  agent.destroy();
  rmSync(folder, { recursive: true, force: true });
}
printSummaryLine('sandbox-flood', rows);
