/**
 * The service as bench/attack/input-cost.ts attacks it, in a child process of its own so that
 * the attacker and the `/health` prober never share its event loop: a scripted model (`mid`)
 * and the embedded llama.cpp engine on the project's tiny GGUF (`tiny`). Tells its parent the
 * port over the IPC channel, and exits when that channel closes.
 */
import type { AddressInfo } from 'node:net';
import { buildApp, ModelRegistry, validateConfig } from '@mms/server';
import { tinyLlamaModel } from '@mms/testing';

async function start(apiKey: string): Promise<number> {
  const config = validateConfig(
    {
      apiKeys: [apiKey],
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
    },
    'attack bench',
  );
  const app = buildApp({ config, registry: ModelRegistry.fromConfig(config.models, process.cwd()) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

if (process.send === undefined) {
  throw new Error('bench/attack/attack-service.ts is started by bench/attack/input-cost.ts (it needs an IPC channel)');
}
const apiKey = process.argv[2];
if (apiKey === undefined) throw new Error('usage: attack-service.ts <api key>');
const port = await start(apiKey);
process.on('disconnect', () => process.exit(0));
process.send({ port });
