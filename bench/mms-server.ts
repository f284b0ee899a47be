/**
 * The mms service on its own: started by bench/messages-throughput.ts as a child process so
 * that the load generator never shares the service's event loop. Tells its parent the port
 * over the IPC channel and shuts down when that channel closes.
 */
import type { AddressInfo } from 'node:net';
import { buildApp, ModelRegistry, type AppOptions } from '@model-messages/server';
import { BatchedLogDestination } from '../packages/server/src/observability/batched-log-destination.js';
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

/**
 * MMS_LOG_LEVEL=info measures the access log too: its lines go to /dev/null, written as `mms
 * serve` writes them (a turn of the event loop's lines in one write). Without it the service is silent.
 */
function benchLog(): Pick<AppOptions, 'logLevel' | 'logDestination'> {
  const level = process.env.MMS_LOG_LEVEL as AppOptions['logLevel'];
  return level ? { logLevel: level, logDestination: new BatchedLogDestination('/dev/null') } : {};
}

async function startService(settings: ServiceSettings): Promise<{ port: number; close: () => Promise<void> }> {
  const config = scriptedBenchConfig(settings.apiKey, settings.modelId);
  const app = buildApp({ config, registry: ModelRegistry.fromConfig(config.models, process.cwd()), ...benchLog() });
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
