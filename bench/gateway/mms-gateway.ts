/**
 * mms as a gateway, for bench/gateway.ts: one model, `bench`, served by the `openai-compatible`
 * backend pointing at the bench's fake engine. With `backends` it is the same engine listed
 * twice as `backends: [primary, fallback]`, the primary healthy, to measure what the fallback
 * wrapper (circuit breaker, first-output tracking) adds. The backend has the default settings
 * (`countTokens: "engine"`: no tokenizer round trip for a prompt far from the window), unless the
 * last argument names another `countTokens` (`every-request`: a `/tokenize` round trip before
 * each request, the default before issue 19). Runs as a child process: tells its parent the
 * port over IPC and shuts down when the channel closes.
 *
 *   mms-gateway.ts <api key> <model id> <engine base URL> <engine model> single|backends [countTokens]
 */
import type { AddressInfo } from 'node:net';
import { buildApp, ModelRegistry, validateConfig } from '@model-messages/server';

function settingsFromArguments(): {
  apiKey: string;
  modelId: string;
  baseURL: string;
  engineModel: string;
  layout: 'single' | 'backends';
  countTokens: string | undefined;
} {
  const [apiKey, modelId, baseURL, engineModel, layout, countTokens] = process.argv.slice(2);
  if (
    apiKey === undefined ||
    modelId === undefined ||
    baseURL === undefined ||
    engineModel === undefined ||
    (layout !== 'single' && layout !== 'backends')
  ) {
    throw new Error(
      'usage: mms-gateway.ts <api key> <model id> <engine base URL> <engine model> single|backends [countTokens]',
    );
  }
  return { apiKey, modelId, baseURL, engineModel, layout, countTokens };
}

async function main(): Promise<void> {
  const settings = settingsFromArguments();
  const engine = {
    type: 'openai-compatible',
    engine: 'vllm',
    baseURL: settings.baseURL,
    apiKey: 'bench-engine-key',
    model: settings.engineModel,
    ...(settings.countTokens === undefined ? {} : { countTokens: settings.countTokens }),
    // Generous admission limits: the benchmark measures the request path, not 529s.
    concurrency: 1024,
    queue: 4096,
  };
  // A fallback is admitted with its list: the primary's concurrency and queue cover both.
  const { concurrency: _concurrency, queue: _queue, ...fallback } = engine;
  const config = validateConfig(
    {
      apiKeys: [settings.apiKey],
      models: [
        {
          id: settings.modelId,
          tier: 'mid',
          generation: 'newer',
          contextWindow: 8192,
          maxOutputTokens: 1024,
          ...(settings.layout === 'single' ? { backend: engine } : { backends: [engine, fallback] }),
        },
      ],
    },
    'bench',
  );
  const registry = ModelRegistry.fromConfig(config.models, process.cwd());
  // The start-up check `mms serve` runs: fails here, rather than in the middle of the load, if
  // the engine is not the one configured.
  for (const { id, prepared } of await registry.prepare({ progress: false }))
    console.error(`mms (${settings.layout}): ${id}: ${prepared}`);
  const app = buildApp({ config, registry });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.on('disconnect', () => {
    void app.close().then(() => process.exit(0));
  });
  process.send?.({ port: (app.server.address() as AddressInfo).port });
}

if (process.send === undefined) {
  throw new Error('bench/gateway/mms-gateway.ts is started by bench/gateway.ts (it needs an IPC channel)');
}
await main();
