/**
 * Attacks on the code execution sandbox (issue 16, cases 2 and 3), against a service in a child
 * process on the loopback (bench/attack/sandbox-service.ts), while a client asks its /health
 * every 10 ms:
 * - forged-call floods: code that writes `{"type":"call",...}` lines for a function it was not
 *   offered straight to its message channel (fd 3), as fast as it can;
 * - unread-answer floods: the same with calls of a function it was offered (web_fetch), never
 *   reading the answers;
 * - memory hogs (Python 64 MB a step, one 1.5 GB allocation, JavaScript through `import js`),
 *   with the service's event loop held busy for 10 s by the service itself once the hog grows.
 *
 *   node --import tsx bench/attack/sandbox-flood.ts [--floods 4] [--only <case name part>]
 *
 * Prints one table: case, outcomes, worst gap between two /health answers, the service's
 * resident memory growth, and the largest sandbox's peak resident memory. Every attack program
 * bounds itself (40 s of flooding, 2 GB of memory), so a service that stops none of them still
 * ends each case; a case that has not ended after CASE_TIMEOUT_MS is abandoned.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { floods: { type: 'string', default: '4' }, only: { type: 'string' } },
});
const FLOODS = Number(values.floods);
const API_KEY = 'attack-key-0123456789';
const MODEL = 'attack-model';
const HEALTH_INTERVAL_MS = 10;
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

async function startService(script: string): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(new URL('./sandbox-service.ts', import.meta.url), [script, API_KEY, MODEL], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`the service exited with code ${code} while starting`)));
  });
  return { child, port };
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function httpCall(
  port: number,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        timeout: CASE_TIMEOUT_MS,
        headers: {
          'x-api-key': API_KEY,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
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
async function runAttack(port: number, program: string): Promise<string> {
  try {
    const reply = await httpCall(
      port,
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

/** Polls /health every HEALTH_INTERVAL_MS until stopped; the worst gap between two answers. */
function pollHealth(port: number): { stop: () => Promise<number> } {
  let running = true;
  let worst = 0;
  const done = (async () => {
    let last = performance.now();
    while (running) {
      const asked = performance.now();
      try {
        await httpCall(port, 'GET', '/health');
      } catch {
        // a failed probe is a gap that goes on until the next answer
        continue;
      }
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
      await sleep(Math.max(0, HEALTH_INTERVAL_MS - (now - asked)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return worst;
    },
  };
}

function residentKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  } catch {
    return 0;
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
  worstGapMs: number;
  serviceGrowthMb: number;
  sandboxPeakMb: number;
}

async function runCase(service: { child: ChildProcess; port: number }, attackCase: AttackCase): Promise<CaseFigures> {
  const servicePid = service.child.pid!;
  const before = residentKb(servicePid, 'VmRSS');
  let servicePeak = before;
  let sandboxPeak = 0;
  let blocked = false;
  const health = pollHealth(service.port);
  const sampler = setInterval(() => {
    servicePeak = Math.max(servicePeak, residentKb(servicePid, 'VmRSS'));
    for (const pid of sandboxPids()) {
      const peak = residentKb(pid, 'VmHWM');
      sandboxPeak = Math.max(sandboxPeak, peak);
      if (attackCase.blockOnHog && !blocked && residentKb(pid, 'VmRSS') > GROWING_KB) {
        blocked = true;
        service.child.send({ block: BLOCK_MS });
      }
    }
  }, 20);
  const runs = attackCase.attacks.flatMap((attack) =>
    Array.from({ length: attack.count }, () => runAttack(service.port, attack.program)),
  );
  const outcomes = await Promise.all(runs);
  clearInterval(sampler);
  const worstGapMs = await health.stop();
  return {
    outcomes,
    worstGapMs,
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
try {
  // Let the warm pool load before the first case: its start is not what is measured.
  await sleep(8_000);
  console.log('| case | outcomes | worst /health gap | service RSS growth | largest sandbox peak |');
  console.log('|---|---|--:|--:|--:|');
  for (const attackCase of CASES) {
    if (values.only !== undefined && !attackCase.name.includes(values.only)) continue;
    const figures = await runCase(service, attackCase);
    console.log(
      `| ${attackCase.name} | ${tally(figures.outcomes)} | ${figures.worstGapMs.toFixed(0)} ms | ${figures.serviceGrowthMb.toFixed(0)} MB | ${figures.sandboxPeakMb.toFixed(0)} MB |`,
    );
    // The pool refills between cases, so that each starts from warm sandboxes.
    await sleep(5_000);
  }
} finally {
  service.child.disconnect();
  agent.destroy();
  rmSync(folder, { recursive: true, force: true });
}
