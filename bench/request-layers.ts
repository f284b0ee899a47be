/**
 * CPU per request, layer by layer, of `POST /v1/messages` (scripted backend, non-streaming):
 * where the service's time goes next to a bare node:http server, measured side by side in one
 * run. Complements bench/messages-throughput.ts, whose requests-per-second ratio moves with the
 * machine: CPU time per request is what the server itself spends, whatever else runs.
 *
 *   node --import tsx bench/request-layers.ts [--requests 20000] [--rounds 2] [--connections 16]
 *
 * Each layer (bench/request-layers/layer-server.ts) runs in a child process of its own; this
 * process sends a fixed number of requests with autocannon and reads the child's
 * process.cpuUsage() before and after. Per layer and round: a 3,000-request warm-up, then five
 * measured batches, the median kept. Rounds run the layers in alternating order.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LAYERS, type Layer } from './request-layers/layers.js';
import { postUnderLoad } from './autocannon-load.js';
import { positiveInteger } from './command-arguments.js';
import { median } from './statistics.js';

const API_KEY = 'bench-key-123456';
const MODEL_ID = 'bench';
const REQUEST_BODY = JSON.stringify({
  model: MODEL_ID,
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Summarize the benchmark in one short sentence please.' }],
});
const REQUEST_HEADERS = { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
const WARMUP_REQUESTS = 3000;
const BATCHES = 5;

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
  },
});
const settings = {
  requests: positiveInteger(values.requests, 'requests'),
  rounds: positiveInteger(values.rounds, 'rounds'),
  connections: positiveInteger(values.connections, 'connections'),
};

interface LayerProcess {
  layer: Layer;
  url: string;
  child: ChildProcess;
}

async function start(layer: Layer): Promise<LayerProcess> {
  const child = fork(
    fileURLToPath(new URL('./request-layers/layer-server.ts', import.meta.url)),
    [layer, API_KEY, MODEL_ID],
    { execArgv: ['--import', 'tsx'], stdio: 'inherit' },
  );
  const [message] = (await once(child, 'message')) as [{ port: number }];
  return { layer, url: `http://127.0.0.1:${message.port}/v1/messages`, child };
}

async function cpuMicroseconds(child: ChildProcess): Promise<number> {
  child.send({ cpu: true });
  const [message] = (await once(child, 'message')) as [{ cpu: NodeJS.CpuUsage }];
  return message.cpu.user + message.cpu.system;
}

function send(target: LayerProcess, amount: number): Promise<unknown> {
  return postUnderLoad(
    { url: target.url, headers: REQUEST_HEADERS, body: REQUEST_BODY, connections: settings.connections, amount },
    target.layer,
  );
}

async function measure(target: LayerProcess): Promise<number> {
  await send(target, WARMUP_REQUESTS);
  const perRequest: number[] = [];
  for (let batch = 0; batch < BATCHES; batch += 1) {
    const before = await cpuMicroseconds(target.child);
    await send(target, settings.requests);
    perRequest.push(((await cpuMicroseconds(target.child)) - before) / settings.requests);
  }
  return median(perRequest);
}

const processes = new Map<Layer, LayerProcess>();
const results = new Map<Layer, number[]>(LAYERS.map((layer) => [layer, []]));
const loadBefore = loadavg()[0] ?? 0;
try {
  for (const layer of LAYERS) processes.set(layer, await start(layer));
  for (let round = 0; round < settings.rounds; round += 1) {
    const order = round % 2 === 0 ? [...LAYERS] : [...LAYERS].reverse();
    for (const layer of order) {
      const target = processes.get(layer);
      if (target === undefined) throw new Error(`no server for ${layer}`);
      const microseconds = await measure(target);
      results.get(layer)?.push(microseconds);
      console.log(`round ${round + 1}: ${layer.padEnd(8)} ${microseconds.toFixed(1)} µs CPU per request`);
    }
  }
} finally {
  for (const { child } of processes.values()) {
    if (child.connected) child.disconnect();
  }
}

const bare = median(results.get('bare') ?? []);
console.log(
  `\nCPU per request (server process, user + system), median of ${settings.rounds} rounds x ${BATCHES} batches of ${settings.requests} requests at ${settings.connections} connections; node ${process.version}; load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? 0).toFixed(2)} after\n`,
);
console.log('| layer | CPU per request | added by the layer | bare / layer |');
console.log('| --- | ---: | ---: | ---: |');
let previous = bare;
for (const layer of LAYERS) {
  const microseconds = median(results.get(layer) ?? []);
  console.log(
    `| ${layer} | ${microseconds.toFixed(1)} µs | ${layer === 'bare' ? '' : `${(microseconds - previous).toFixed(1)} µs`} | ${(bare / microseconds).toFixed(2)} |`,
  );
  previous = microseconds;
}
console.log(
  '\n"bare / layer" is the requests-per-second ratio to expect when the server, not the load generator, is the bottleneck.',
);
