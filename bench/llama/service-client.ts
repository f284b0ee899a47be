/**
 * The service side of the engine benchmark: starts bench/llama/service-process.ts as a child and
 * times whole `POST /v1/messages` requests against it, non-streaming and streaming.
 */
import { parseSse } from '@model-messages/testing';
import { askChild, startBenchChild, type BenchChild } from './child-process.js';
import type { GenerationSample } from './direct-engine.js';
import type { ServiceSettings } from './service-process.js';
import { API_KEY, MODEL_ID } from './shared-settings.js';

export const REQUEST_HEADERS = {
  'x-api-key': API_KEY,
  'anthropic-version': '2023-06-01',
  'content-type': 'application/json',
};

export interface ServiceProcess {
  url: string;
  child: BenchChild;
  stop(): Promise<void>;
}

function readPort(message: unknown): number {
  const port = typeof message === 'object' && message !== null ? (message as { port?: unknown }).port : undefined;
  if (typeof port !== 'number')
    throw new Error(`expected { port } from the service process, got ${JSON.stringify(message)}`);
  return port;
}

export async function startServiceProcess(modelPath: string, settings?: ServiceSettings): Promise<ServiceProcess> {
  const child = await startBenchChild('./service-process.ts', [
    modelPath,
    ...(settings ? [JSON.stringify(settings)] : []),
  ]);
  return { url: `http://127.0.0.1:${readPort(child.ready)}/v1/messages`, child, stop: () => child.stop() };
}

/** The service process's CPU time so far, in milliseconds (asked over IPC, outside any wall clock). */
async function serviceCpuMilliseconds(service: ServiceProcess): Promise<number> {
  const usage = (await askChild(service.child, 'cpu-usage')) as Partial<NodeJS.CpuUsage> | null;
  if (typeof usage?.user !== 'number' || typeof usage.system !== 'number')
    throw new Error(`expected process.cpuUsage() from the service, got ${JSON.stringify(usage)}`);
  return (usage.user + usage.system) / 1000;
}

/** Times `request` on the wall clock here and on the service's CPU clock there. */
async function timed(service: ServiceProcess, request: () => Promise<number>): Promise<GenerationSample> {
  const cpuBefore = await serviceCpuMilliseconds(service);
  const started = performance.now();
  const tokens = await request();
  const milliseconds = performance.now() - started;
  return { tokens, milliseconds, cpuMilliseconds: (await serviceCpuMilliseconds(service)) - cpuBefore };
}

function requestBody(prompt: string, maxTokens: number, stream: boolean): string {
  return JSON.stringify({
    model: MODEL_ID,
    max_tokens: maxTokens,
    temperature: 1,
    stream,
    messages: [{ role: 'user', content: prompt }],
  });
}

async function post(service: ServiceProcess, body: string): Promise<Response> {
  const response = await fetch(service.url, { method: 'POST', headers: REQUEST_HEADERS, body });
  if (response.status !== 200) throw new Error(`the service answered ${response.status}: ${await response.text()}`);
  return response;
}

function outputTokensOf(usage: unknown, where: string): number {
  const tokens =
    typeof usage === 'object' && usage !== null ? (usage as { output_tokens?: unknown }).output_tokens : undefined;
  if (typeof tokens !== 'number') throw new Error(`no usage.output_tokens in the ${where}`);
  return tokens;
}

/** One whole request: the clock runs from sending it to the reply's last byte. */
export function generateThroughService(
  service: ServiceProcess,
  prompt: string,
  maxTokens: number,
): Promise<GenerationSample> {
  return timed(service, async () => {
    const reply = (await (await post(service, requestBody(prompt, maxTokens, false))).json()) as { usage?: unknown };
    return outputTokensOf(reply.usage, 'reply');
  });
}

/** One whole streamed request: the clock stops when the event stream has ended. */
export function streamThroughService(
  service: ServiceProcess,
  prompt: string,
  maxTokens: number,
): Promise<GenerationSample> {
  return timed(service, async () => {
    const text = await (await post(service, requestBody(prompt, maxTokens, true))).text();
    const delta = parseSse(text).find((event) => event.event === 'message_delta');
    return outputTokensOf(delta?.data.usage, 'message_delta event');
  });
}
