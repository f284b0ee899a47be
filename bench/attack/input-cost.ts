/**
 * What one request whose cost grows with its size does to the service (issue 16): for each case,
 * a fresh service (`mms serve` in a child, bench/attack/service-child.ts) gets one attack request
 * while a second client (bench/attack/health-prober.ts) asks `/health` every 10 ms. The table gives the attack's status,
 * the longest time between two `/health` replies (about 11 ms when nothing stalls), the service's
 * peak RSS (VmHWM, Linux) and whether it survived. Loopback only. docs/reliability.md has the figures.
 *
 *   node --import tsx bench/attack/input-cost.ts [--only <part of a case name>] [--checkout ../mms-main]
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { parseArgs } from 'node:util';
import { tinyLlamaModel } from '@model-messages/testing';
import { startHealthWatch } from './health-watch.js';
import { startServiceChild, type ServiceChild } from './service-child.js';
import { isServerError, printSummaryLine, type SummaryRow } from './summary-line.js';

const ATTACK_TIMEOUT_MS = 180_000;

interface AttackCase {
  name: string;
  path: '/v1/messages' | '/v1/messages/count_tokens';
  /** Built only when the case runs: some are 30 MB. */
  body: () => Buffer;
}

/** `{"model": ..., "max_tokens": ..., "messages": <messages>}` around a messages array written as text. */
function requestText(model: string, messagesText: string, extra = ''): Buffer {
  return Buffer.from(`{"model":${JSON.stringify(model)},"max_tokens":16,${extra}"messages":${messagesText}}`);
}

function repeated(item: string, count: number): string {
  return `[${`${item},`.repeat(count - 1)}${item}]`;
}

function invalidContent(count: number): string {
  return `[{"role":"user","content":${repeated('1', count)}}]`;
}

function countTokensText(messagesText: string): Buffer {
  return Buffer.from(`{"model":"mid","messages":${messagesText}}`);
}

/** A user turn of `characters` characters of short words: many tokens for every tokenizer. */
function longPrompt(characters: number): string {
  return JSON.stringify([{ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(characters / 27) }]);
}

/** A tool call whose input is an array of `count` empty objects: valid, and one value per two bytes. */
function emptyObjectsInToolInput(count: number): string {
  return `[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"look","input":{"items":${repeated('{}', count)}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}]}]`;
}

const LONG_NAME = 'p'.repeat(700);
const strictLongNameTool = JSON.stringify({
  tools: [
    {
      name: 'long_name',
      description: 'A tool whose only property has a 700-character name.',
      strict: true,
      input_schema: { type: 'object', properties: { [LONG_NAME]: { type: 'string' } }, required: [LONG_NAME] },
    },
  ],
  tool_choice: { type: 'tool', name: 'long_name' },
}).slice(1, -1);

const CASES: AttackCase[] = [
  {
    name: 'content of 150,000 invalid items (0.3 MB)',
    path: '/v1/messages',
    body: () => requestText('mid', invalidContent(150_000)),
  },
  {
    name: 'content of 4,000,000 invalid items (8 MB)',
    path: '/v1/messages',
    body: () => requestText('mid', invalidContent(4_000_000)),
  },
  {
    name: 'content of 10,000,000 invalid items (20 MB)',
    path: '/v1/messages',
    body: () => requestText('mid', invalidContent(10_000_000)),
  },
  {
    name: 'count_tokens: 10,000,000 invalid items (20 MB)',
    path: '/v1/messages/count_tokens',
    body: () => countTokensText(invalidContent(10_000_000)),
  },
  {
    name: '1,000,000 invalid messages (25 MB)',
    path: '/v1/messages',
    body: () => requestText('mid', repeated('{"role":"x","content":""}', 1_000_000)),
  },
  {
    name: '1,000,000 valid messages (30 MB)',
    path: '/v1/messages',
    body: () => requestText('mid', repeated('{"role":"user","content":"a"}', 1_000_000)),
  },
  {
    name: 'tool input of 10,000,000 empty objects (30 MB)',
    path: '/v1/messages',
    body: () => requestText('mid', emptyObjectsInToolInput(10_000_000)),
  },
  { name: 'scripted: 31 MB prompt', path: '/v1/messages', body: () => requestText('mid', longPrompt(31_000_000)) },
  { name: 'llama-cpp: 31 MB prompt', path: '/v1/messages', body: () => requestText('tiny', longPrompt(31_000_000)) },
  {
    name: 'llama-cpp count_tokens: 31 MB prompt',
    path: '/v1/messages/count_tokens',
    body: () => Buffer.from(`{"model":"tiny","messages":${longPrompt(31_000_000)}}`),
  },
  {
    name: 'llama-cpp: strict property name of 700 characters',
    path: '/v1/messages',
    body: () => requestText('tiny', '[{"role":"user","content":"hi"}]', `${strictLongNameTool},`),
  },
];

// --- one case ----------------------------------------------------------------------------

/** A scripted model (`mid`) and the embedded llama.cpp engine on the project's tiny GGUF (`tiny`). */
async function serviceConfig(): Promise<Record<string, unknown>> {
  return {
    models: [
      {
        id: 'mid',
        tier: 'mid',
        generation: 'newer',
        contextWindow: 200_000,
        maxOutputTokens: 8192,
        backend: { type: 'scripted' },
      },
      {
        id: 'tiny',
        tier: 'mid',
        generation: 'newer',
        // The tiny model's own context length.
        contextWindow: 4096,
        maxOutputTokens: 1024,
        backend: { type: 'llama-cpp', model: await tinyLlamaModel(), threads: 1, concurrency: 2 },
      },
    ],
  };
}

interface Outcome {
  status: string;
  httpStatus: number | undefined;
  crashed: boolean;
  message: string;
  seconds: number;
  worstGapMs: number;
  worstLoopDelayMs: number;
  peakRssMb: number | undefined;
}

interface Reply {
  status: number;
  text: string;
}

function post(service: ServiceChild, path: string, body: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${service.baseURL}${path}`,
      {
        method: 'POST',
        headers: { ...service.headers, 'content-length': body.length },
        timeout: ATTACK_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no reply in ${ATTACK_TIMEOUT_MS / 1000} s`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function errorMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    return (parsed.error?.message ?? '').slice(0, 90);
  } catch {
    return text.slice(0, 90);
  }
}

async function runCase(attack: AttackCase, config: Record<string, unknown>, checkout?: string): Promise<Outcome> {
  const body = attack.body();
  const service = await startServiceChild({ checkout, config });
  try {
    // The embedded model loads on first use: load it before the clock starts.
    await post(service, '/v1/messages/count_tokens', countTokensText('[{"role":"user","content":"hi"}]'));
    await post(
      service,
      '/v1/messages/count_tokens',
      Buffer.from('{"model":"tiny","messages":[{"role":"user","content":"hi"}]}'),
    );
    const health = await startHealthWatch(service.baseURL);
    const attackStartedAt = Date.now();
    const started = performance.now();
    const reply = await post(service, attack.path, body).catch((error: Error) => error);
    const seconds = (performance.now() - started) / 1000;
    const peak = service.peakRssMb();
    const { worstGapMs } = await health.stop();
    const died = service.crashed();
    return {
      status: died === undefined ? (reply instanceof Error ? reply.message : String(reply.status)) : `died (${died})`,
      httpStatus: reply instanceof Error ? undefined : reply.status,
      crashed: died !== undefined,
      message: reply instanceof Error ? '' : errorMessage(reply.text),
      seconds,
      worstGapMs,
      worstLoopDelayMs: service.worstLoopDelay(attackStartedAt).delayMs,
      peakRssMb: peak,
    };
  } finally {
    await service.stop();
  }
}

// --- report ------------------------------------------------------------------------------

function printRow(attack: AttackCase, outcome: Outcome): void {
  const rss = outcome.peakRssMb === undefined ? 'n/a' : `${outcome.peakRssMb.toFixed(0)} MB`;
  console.log(
    `| ${attack.name} | ${outcome.status} | ${outcome.seconds.toFixed(2)} s | ${outcome.worstGapMs.toFixed(0)} ms | ${outcome.worstLoopDelayMs.toFixed(0)} ms | ${rss} | ${outcome.message} |`,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, checkout: { type: 'string' } } });
  const chosen = CASES.filter((attack) => values.only === undefined || attack.name.includes(values.only));
  if (chosen.length === 0) throw new Error(`--only ${values.only ?? ''} matches no case`);
  console.log(
    `node ${process.version}, load average before: ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`,
  );
  console.log('');
  console.log('| case | status | reply after | worst /health gap | worst loop delay | peak RSS | message |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | --- |');
  const config = await serviceConfig();
  const rows: SummaryRow[] = [];
  for (const attack of chosen) {
    const outcome = await runCase(attack, config, values.checkout);
    printRow(attack, outcome);
    rows.push({
      case: `input cost: ${attack.name}`,
      crashes: outcome.crashed ? 1 : 0,
      serverErrors: outcome.httpStatus !== undefined && isServerError(outcome.httpStatus) ? 1 : 0,
      worstStallMs: outcome.worstGapMs,
      worstLoopDelayMs: outcome.worstLoopDelayMs,
      peakRssMb: outcome.peakRssMb ?? null,
    });
  }
  printSummaryLine('input-cost', rows);
}

await main();
