/**
 * The service under attack for bench/attack/sandbox-flood.ts, in a process of its own so that
 * the attacker's /health poller and memory readings never share its event loop. It runs one
 * scripted model whose script (the first argument) answers each `run <program>` prompt with a code
 * execution of that program, with the default code execution limits (512 MB, 30 s) and room for
 * eight executions at once.
 *
 * Over IPC it tells its parent the port, and on `{ block: ms }` it holds its own event loop
 * busy that long (a stand-in for any other request that keeps the loop busy), answering
 * `{ blocked: true }` once the loop is free again.
 */
import type { AddressInfo } from 'node:net';
import { buildApp, ModelRegistry, validateConfig } from '@mms/server';

interface BlockRequest {
  block: number;
}

async function main(scriptPath: string, apiKey: string, modelId: string): Promise<void> {
  const config = validateConfig(
    {
      apiKeys: [apiKey],
      models: [
        {
          id: modelId,
          tier: 'mid',
          generation: 'newer',
          contextWindow: 8192,
          maxOutputTokens: 1024,
          backend: { type: 'scripted', script: scriptPath, concurrency: 64, queue: 64 },
        },
      ],
      serverTools: {
        codeExecution: { maxConcurrent: 8, poolSize: 4, warmAtStart: true },
      },
    },
    'attack bench',
  );
  const app = buildApp({ config, registry: ModelRegistry.fromConfig(config.models, process.cwd()) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.on('message', (message: BlockRequest) => {
    const until = performance.now() + message.block;
    while (performance.now() < until) {
      // deliberately busy: nothing else on this loop runs meanwhile
    }
    process.send?.({ blocked: true });
  });
  process.on('disconnect', () => {
    void app.close().then(() => process.exit(0));
  });
  process.send?.({ port: (app.server.address() as AddressInfo).port });
}

const [scriptPath, apiKey, modelId] = process.argv.slice(2);
if (process.send === undefined || scriptPath === undefined || apiKey === undefined || modelId === undefined)
  throw new Error(
    'bench/attack/sandbox-service.ts is started by bench/attack/sandbox-flood.ts (IPC; <script> <api key> <model id>)',
  );
await main(scriptPath, apiKey, modelId);
