/**
 * The mms service with one llama-cpp model, in a process of its own: started by
 * bench/llama-engine.ts (and the prefix-reuse and concurrency benches) so that the benchmark's client (and its direct engine) never share the
 * service's event loop. Tells its parent the port over IPC; exits when that channel closes.
 */
import type { AddressInfo } from 'node:net';
import { buildApp, ModelRegistry, validateConfig } from '@model-messages/server';
import { API_KEY, CONTEXT_SIZE, MAX_OUTPUT_TOKENS, MODEL_ID, THREADS } from './shared-settings.js';

/** What a bench changes of the model entry: its window and backend settings. */
export interface ServiceSettings {
  contextWindow?: number;
  backend?: Record<string, unknown>;
}

function readArguments(): { modelPath: string; settings: ServiceSettings } {
  const [modelPath, settings] = process.argv.slice(2);
  if (modelPath === undefined) throw new Error('usage: service-process.ts <model.gguf> [settings JSON]');
  return { modelPath, settings: settings === undefined ? {} : (JSON.parse(settings) as ServiceSettings) };
}

async function startService(
  modelPath: string,
  settings: ServiceSettings,
): Promise<{ port: number; close: () => Promise<void> }> {
  const config = validateConfig(
    {
      apiKeys: [API_KEY],
      models: [
        {
          id: MODEL_ID,
          tier: 'mid',
          generation: 'newer',
          contextWindow: settings.contextWindow ?? CONTEXT_SIZE,
          maxOutputTokens: MAX_OUTPUT_TOKENS,
          backend: { type: 'llama-cpp', model: modelPath, threads: THREADS, concurrency: 1, ...settings.backend },
        },
      ],
    },
    'bench',
  );
  const app = buildApp({ config, registry: ModelRegistry.fromConfig(config.models, process.cwd()) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { port, close: () => app.close() };
}

/** The parent reads the service's CPU time before and after each request; nothing else comes over IPC. */
function answerCpuQueries(): void {
  process.on('message', () => {
    process.send?.(process.cpuUsage());
  });
}

async function main(): Promise<void> {
  const { modelPath, settings } = readArguments();
  const service = await startService(modelPath, settings);
  answerCpuQueries();
  process.on('disconnect', () => {
    void service.close().then(() => process.exit(0));
  });
  process.send?.({ port: service.port });
}

if (process.send === undefined) {
  throw new Error('bench/llama/service-process.ts is started by bench/llama-engine.ts (it needs an IPC channel)');
}
await main();
