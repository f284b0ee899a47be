/**
 * The mms service on its own: started by bench/messages-throughput.ts as a child process so
 * that the load generator never shares the service's event loop. Tells its parent the port
 * over the IPC channel and shuts down when that channel closes.
 */
import type { AddressInfo } from 'node:net';
import { buildApp, ModelRegistry } from '@model-messages/server';
import { scriptedBenchConfig } from './scripted-bench-config.js';

interface ServiceSettings {
  apiKey: string;
  modelId: string;
}

/** The parent owns the key and model name so that both sides of the benchmark agree on them. */
function settingsFromArguments(): ServiceSettings {
  const [apiKey, modelId] = process.argv.slice(2);
  if (apiKey === undefined || modelId === undefined) throw new Error('usage: mms-server.ts <api key> <model id>');
  return { apiKey, modelId };
}

async function startService(settings: ServiceSettings): Promise<{ port: number; close: () => Promise<void> }> {
  const config = scriptedBenchConfig(settings.apiKey, settings.modelId);
  const app = buildApp({ config, registry: ModelRegistry.fromConfig(config.models, process.cwd()) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { port, close: () => app.close() };
}

async function main(): Promise<void> {
  const service = await startService(settingsFromArguments());
  // A normal exit (rather than a kill) lets `--cpu-prof` write its profile.
  process.on('disconnect', () => {
    void service.close().then(() => process.exit(0));
  });
  process.send?.({ port: service.port });
}

if (process.send === undefined) {
  throw new Error('bench/mms-server.ts is started by bench/messages-throughput.ts (it needs an IPC channel)');
}
await main();
