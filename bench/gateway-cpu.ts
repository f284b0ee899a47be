/**
 * mms's CPU per request as a gateway, one request at a time, this checkout against another,
 * alternated in one run (issue 36): what bench/compare-checkouts.ts does for requests/s at 32
 * connections, for the measure the gateway aim is about, and for the streamed path too. Each
 * side is its own compiled `mms serve` (bench/mms-serve-process.ts, the gateway bench's config,
 * default logging and metrics) in front of one shared fake engine (bench/gateway/fake-engine.ts,
 * chunks written apart); per round and mode, each side in turn (the order alternating) gets
 * `--requests` requests on one keep-alive connection, and its process's CPU over them
 * (bench/process-cpu.ts) and its p50 are printed. On a shared 2-core VM whose speed drifts by
 * half within a minute, a change shows as this side ahead in most rounds, not in one median; and
 * many short rounds pair the sides better than a few long ones: on that VM, runs of 8 to 12 rounds
 * of 1,000 to 1,500 requests gave per-round ratios from 0.6 to 1.4, runs of 40 rounds of 300
 * mostly 0.83 to 1.05 (issue 36).
 *
 *   node --import tsx bench/gateway-cpu.ts [<other checkout> | --floor] [--rounds 40] [--requests 300]
 *                                          [--modes json,stream] [--profile <folder>]
 *
 * `--floor` puts the gateway bench's floor (bench/gateway/floor-proxy.ts: the least a Messages
 * gateway in Node does) on the other side: how much CPU mms spends above it, round by round.
 * Without another checkout it measures this one alone; `--profile` starts this side with
 * `node --cpu-prof --cpu-prof-dir <folder>`, for a profile under exactly this load (the profile
 * is written when the server exits).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { forkServer } from './child-server.js';
import { positiveInteger } from './command-arguments.js';
import { LatencyProbe, type HttpTarget } from './gateway/load.js';
import { gatewayConfig } from './gateway/mms-config.js';
import { startMmsServe } from './mms-serve-process.js';
import { processTreeCpuMicroseconds } from './process-cpu.js';
import { median } from './statistics.js';

const API_KEY = 'bench-key-123456';
const MODEL_ID = 'bench';
const PROMPT = 'Summarize the benchmark in one short sentence please.';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '40' },
    requests: { type: 'string', default: '300' },
    modes: { type: 'string', default: 'json,stream' },
    profile: { type: 'string' },
    floor: { type: 'boolean', default: false },
  },
});
if (positionals.length > 1 || (values.floor && positionals.length > 0))
  throw new Error('usage: gateway-cpu.ts [<other checkout> | --floor] [--rounds 40] [--requests 300]');
const otherCheckout = positionals[0] === undefined ? undefined : resolve(positionals[0]);
const rounds = positiveInteger(values.rounds, 'rounds');
const requests = positiveInteger(values.requests, 'requests');
const modes = values.modes.split(',').map((mode) => mode.trim());
for (const mode of modes)
  if (mode !== 'json' && mode !== 'stream') throw new Error(`--modes takes json and/or stream, got ${mode}`);

function target(port: number, mode: string): HttpTarget {
  return {
    name: mode,
    url: `http://127.0.0.1:${port}/v1/messages`,
    headers: { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL_ID,
      max_tokens: 64,
      messages: [{ role: 'user', content: PROMPT }],
      ...(mode === 'stream' ? { stream: true } : {}),
    }),
  };
}

/** A server measured: an `mms serve`, or the floor. */
interface Server {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** `count` requests one at a time; the server's CPU microseconds per request and the p50 in ms. */
async function measure(server: Server, probe: LatencyProbe, count: number) {
  const before = processTreeCpuMicroseconds(server.pid);
  const samples: number[] = [];
  for (let index = 0; index < count; index += 1) samples.push(await probe.once());
  const cpu = (processTreeCpuMicroseconds(server.pid) - before) / count;
  return { cpu, p50: median(samples) };
}

const benchFile = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const engine = await forkServer('fake engine', benchFile('./gateway/fake-engine.ts'), []);
const engineBaseURL = `http://127.0.0.1:${engine.port}/v1`;
const engineModel = String(engine.message.model);
const config = gatewayConfig({ apiKey: API_KEY, modelId: MODEL_ID, engineBaseURL, engineModel, layout: 'single' });

/** The floor, forked as the gateway bench forks it, in front of the same engine. */
function startFloor(): Promise<Server> {
  const floorArguments = [engineBaseURL, engineModel, 'undici-dispatch', 'stream'];
  return forkServer('floor proxy', benchFile('./gateway/floor-proxy.ts'), floorArguments);
}
const sides: Array<{ name: string; server: Server }> = [
  {
    name: 'this',
    server: await startMmsServe('this checkout', config, {
      nodeOptions: values.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(values.profile)],
    }),
  },
];
if (values.floor) sides.push({ name: 'floor', server: await startFloor() });
if (otherCheckout !== undefined)
  sides.push({
    name: 'other',
    server: await startMmsServe('other checkout', config, { checkout: otherCheckout }),
  });

try {
  for (const mode of modes) {
    const probes = sides.map((side) => new LatencyProbe(target(side.server.port, mode)));
    // Warm: the JIT has seen the path before the first measured round.
    for (const [index, side] of sides.entries()) await measure(side.server, probes[index]!, Math.min(500, requests));
    const results = sides.map(() => ({ cpu: [] as number[], p50: [] as number[] }));
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? [...sides.keys()] : [...sides.keys()].reverse();
      for (const index of order) {
        const { cpu, p50 } = await measure(sides[index]!.server, probes[index]!, requests);
        results[index]!.cpu.push(cpu);
        results[index]!.p50.push(p50);
      }
      console.log(
        `${mode} round ${round + 1}: ` +
          sides
            .map((side, index) => {
              const result = results[index]!;
              return `${side.name} ${result.cpu[round]!.toFixed(0)} µs/req p50 ${result.p50[round]!.toFixed(3)} ms`;
            })
            .join(', ') +
          (sides.length === 2
            ? `, this / ${sides[1]!.name} CPU ${(results[0]!.cpu[round]! / results[1]!.cpu[round]!).toFixed(3)}`
            : ''),
      );
    }
    for (const probe of probes) probe.close();
    const summary = sides
      .map((side, index) => {
        const result = results[index]!;
        const cpu = [...result.cpu].sort((left, right) => left - right);
        return `${side.name} CPU median ${median(cpu).toFixed(0)} µs/req (${cpu[0]!.toFixed(0)} to ${cpu.at(-1)!.toFixed(0)}), p50 median ${median(result.p50).toFixed(3)} ms`;
      })
      .join('; ');
    console.log(`${mode}: ${summary}`);
    if (sides.length === 2) {
      const ratios = results[0]!.cpu.map((cpu, round) => cpu / results[1]!.cpu[round]!);
      console.log(
        `${mode}: this / ${sides[1]!.name} CPU per round ${ratios.map((ratio) => ratio.toFixed(3)).join(', ')} (median ${median(ratios).toFixed(3)}, this lower in ${ratios.filter((ratio) => ratio < 1).length} of ${ratios.length})`,
      );
    }
  }
  if (otherCheckout !== undefined) console.log(`other: ${otherCheckout}`);
} finally {
  for (const side of sides) await side.server.stop();
  await engine.stop();
}
