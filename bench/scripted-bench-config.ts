import { validateConfig, type ServiceConfig } from '@model-messages/server';

/**
 * The service as the request-path benchmarks run it: one scripted mid-tier model, and admission
 * limits so generous that no request is turned away (they measure the request path, not 529s).
 */
export function scriptedBenchConfig(apiKey: string, modelId: string): ServiceConfig {
  return validateConfig(
    {
      apiKeys: [apiKey],
      models: [
        {
          id: modelId,
          tier: 'mid',
          generation: 'newer',
          contextWindow: 8192,
          maxOutputTokens: 1024,
          backend: { type: 'scripted', concurrency: 1024, queue: 4096 },
        },
      ],
    },
    'bench',
  );
}
