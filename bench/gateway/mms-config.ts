/**
 * The config of mms as a gateway, for bench/gateway.ts and bench/compare-checkouts.ts: one model
 * served by the `openai-compatible` backend pointing at the bench's fake engine, with the
 * default settings (`countTokens: "engine"`: no tokenizer round trip for a prompt far from the
 * window) unless `countTokens` names another (`every-request`: a `/tokenize` round trip before
 * each request, the default before issue 19). Its layout:
 * - `single`: the engine alone;
 * - `backends`: the same engine listed twice, `backends: [primary, fallback]`, the primary
 *   healthy, to measure what the list (circuit breaker, first-output tracking) adds;
 * - `session`: the engine listed twice with `balance: "session"` (issue 36), to measure what the
 *   balancer (the conversation's key, the ring, the load bound) adds.
 */

export type GatewayLayout = 'single' | 'backends' | 'session';

export interface GatewaySettings {
  apiKey: string;
  modelId: string;
  engineBaseURL: string;
  engineModel: string;
  layout: GatewayLayout;
  countTokens?: string;
}

export function gatewayConfig(settings: GatewaySettings): Record<string, unknown> {
  const engine = {
    type: 'openai-compatible',
    engine: 'vllm',
    baseURL: settings.engineBaseURL,
    apiKey: 'bench-engine-key',
    model: settings.engineModel,
    ...(settings.countTokens === undefined ? {} : { countTokens: settings.countTokens }),
  };
  // Generous admission limits, on the first backend, which admits a list: the benchmark
  // measures the request path, not 529s.
  const admitted = { ...engine, concurrency: 1024, queue: 4096 };
  const placement =
    settings.layout === 'single'
      ? { backend: admitted }
      : {
          backends: [admitted, engine],
          ...(settings.layout === 'session' ? { balance: 'session' } : {}),
        };
  return {
    apiKeys: [settings.apiKey],
    models: [
      {
        id: settings.modelId,
        tier: 'mid',
        generation: 'newer',
        contextWindow: 8192,
        maxOutputTokens: 1024,
        ...placement,
      },
    ],
  };
}
