/**
 * Shared set-up of the openai-compatible backend tests: one fake engine per engine kind, and
 * one service with a model per engine, named after it (`vllm`, `llama.cpp`, ...).
 */
import { after, before } from 'node:test';
import {
  FakeOpenAiEngine,
  postJson,
  startService,
  type FakeEngineKind,
  type RunningService,
  type StartOptions,
} from '@model-messages/testing';

export const ENGINE_KINDS: readonly FakeEngineKind[] = ['vllm', 'sglang', 'llama.cpp', 'ollama', 'generic'];

export interface Reply {
  content: Array<{
    type: string;
    text?: string;
    thinking?: string;
    signature?: string;
    id?: string;
    name?: string;
    input?: Record<string, unknown>;
    tool_use_id?: string;
    content?: unknown;
  }>;
  stop_reason: string;
  stop_sequence: string | null;
  usage: { input_tokens: number; output_tokens: number };
  error?: { type: string; message: string };
}

export interface EngineBench {
  service: RunningService;
  engines: Record<FakeEngineKind, FakeOpenAiEngine>;
}

/** Extra backend fields per engine, and extra models: `${kind}-${suffix}` on the same engine. */
export interface BenchOptions {
  backend?: Partial<Record<FakeEngineKind, Record<string, unknown>>>;
  variants?: Array<{ suffix: string; engine: FakeEngineKind; backend: Record<string, unknown> }>;
  /** The service's log, for a test that reads its lines (silent by default). */
  log?: StartOptions['log'];
}

export function useEngines(options: BenchOptions = {}): EngineBench {
  const bench = { engines: {} } as EngineBench;
  before(async () => {
    for (const kind of ENGINE_KINDS) bench.engines[kind] = await FakeOpenAiEngine.start(kind);
    const model = (id: string, kind: FakeEngineKind, backend: Record<string, unknown>) =>
      bench.engines[kind].modelConfig(id, backend);
    bench.service = await startService(
      {
        models: [
          ...ENGINE_KINDS.map((kind) => model(kind, kind, options.backend?.[kind] ?? {})),
          ...(options.variants ?? []).map((variant) =>
            model(`${variant.engine}-${variant.suffix}`, variant.engine, variant.backend),
          ),
        ],
      },
      undefined,
      { log: options.log },
    );
  });
  after(async () => {
    await bench.service.close();
    for (const kind of ENGINE_KINDS) await bench.engines[kind].close();
  });
  return bench;
}

/**
 * The model `vllm` on one fake vLLM engine, for a test that starts its own service with it
 * (8,192-token window); `backend`: extra backend fields.
 */
export function vllmModel(engine: FakeOpenAiEngine, backend: Record<string, unknown> = {}) {
  return engine.modelConfig('vllm', backend, { maxOutputTokens: 1_024 });
}

export const user = (content: unknown) => ({ role: 'user', content });

/** POSTs a message request to the model named `model` (an engine kind or a variant) and reads the JSON reply. */
export async function send(
  bench: EngineBench,
  model: string,
  body: Record<string, unknown>,
): Promise<{ status: number; reply: Reply; headers: Headers }> {
  const response = await postJson(bench.service, '/v1/messages', {
    model,
    max_tokens: 200,
    messages: [user('Hello')],
    ...body,
  });
  return { status: response.status, reply: (await response.json()) as Reply, headers: response.headers };
}

export const WEATHER = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

export const BOOKING = {
  name: 'book_flight',
  description: 'Books a flight between two airports.',
  strict: true,
  input_schema: {
    type: 'object',
    properties: {
      from: { type: 'string' },
      to: { type: 'string' },
      passengers: { type: 'integer' },
      cabin: { type: 'string', enum: ['economy', 'business'] },
    },
    required: ['from', 'to', 'passengers', 'cabin'],
    additionalProperties: false,
  },
};

export const CITY_FORMAT = {
  type: 'object',
  properties: { city: { type: 'string' }, country: { type: 'string' } },
  required: ['city', 'country'],
  additionalProperties: false,
};
