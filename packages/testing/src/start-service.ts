/**
 * Starts the real service on a loopback port for a test, with a config given inline. Every
 * test talks HTTP to it, exactly as a client would.
 */
import type { AddressInfo } from 'node:net';
import {
  buildApp,
  type AppOptions,
  ModelRegistry,
  type Signer,
  validateConfig,
  type ServiceConfigInput,
  type ToolProviders,
} from '@model-messages/server';
import { API_VERSION, VERSION_HEADER } from '@model-messages/protocol';

export const TEST_API_KEY = 'test-key-0123456789';

export interface RunningService {
  baseURL: string;
  apiKey: string;
  registry: ModelRegistry;
  /** Signs as the service does, with its key: for blocks a test makes itself (signed-blocks.ts). */
  signer: Signer;
  /** Headers a well-behaved client sends. */
  headers: Record<string, string>;
  close(): Promise<void>;
}

/** One scripted model per tier and generation, named `<tier>-<generation>` (e.g. `small-newer`). */
export function scriptedModels(backend: Record<string, unknown> = {}): ServiceConfigInput['models'] {
  const tiers = ['small', 'mid', 'large'] as const;
  const generations = ['older', 'newer'] as const;
  return tiers.flatMap((tier) =>
    generations.map((generation) => ({
      id: `${tier}-${generation}`,
      aliases: generation === 'newer' ? [tier] : [],
      tier,
      generation,
      contextWindow: 4096,
      maxOutputTokens: 2048,
      backend: { type: 'scripted' as const, ...backend },
    })),
  );
}

/** Seams for tests: the registry's clock and warning sink, and tool providers (a code runner or host lookup in place of the built-in ones). */
export interface StartOptions {
  registry?: Parameters<typeof ModelRegistry.fromConfig>[2];
  toolProviders?: ToolProviders;
  /**
   * The service's signing key, in place of the config's; default: the config's `signingKey` or
   * the key file in its `dataFolder`, else a random key for this service. Two services given the
   * same key verify each other's blocks, as replicas do; a list signs with the first key and
   * verifies with all (a rotation).
   */
  signingKey?: AppOptions['signingKey'];
  /** The service's log: silent unless a level is given; a destination to read its lines (default stdout). */
  log?: { level: NonNullable<AppOptions['logLevel']>; destination?: AppOptions['logDestination'] };
}

export async function startService(
  config: Partial<ServiceConfigInput> = {},
  configFolder = process.cwd(),
  options: StartOptions = {},
): Promise<RunningService> {
  const full = validateConfig({ apiKeys: [TEST_API_KEY], models: scriptedModels(), ...config }, 'test config');
  const registry = ModelRegistry.fromConfig(full.models, configFolder, options.registry);
  const app = buildApp({
    config: full,
    registry,
    toolProviders: options.toolProviders,
    // Without a key or a data folder in the config, a random key: never the key file of the
    // default data folder, as tests must not write into the home folder.
    signingKey: options.signingKey,
    logLevel: options.log?.level,
    logDestination: options.log?.destination,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    apiKey: TEST_API_KEY,
    registry,
    signer: app.signer,
    headers: { 'x-api-key': TEST_API_KEY, [VERSION_HEADER]: API_VERSION, 'content-type': 'application/json' },
    close: () => app.close(),
  };
}

/** POSTs `body` as JSON to `path` with the standard headers, overridable per call. */
export async function postJson(
  service: RunningService,
  path: string,
  body: unknown,
  headers: Record<string, string | undefined> = {},
): Promise<Response> {
  const merged = Object.fromEntries(
    Object.entries({ ...service.headers, ...headers }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  return fetch(`${service.baseURL}${path}`, {
    method: 'POST',
    headers: merged,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
