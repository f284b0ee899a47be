/**
 * Shared set-up for the client's end-to-end tests: the real service on loopback with scripted
 * models sized like real ones, a fetch that records every request body and can inject
 * `mms-fault` per attempt, and a Client wired to both.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceConfigInput } from '@model-messages/server';
import { startService, type RunningService } from '@model-messages/testing';
import { Client, type ClientOptions } from '@model-messages/client';

export const CONTEXT_WINDOW = 200_000;
export const MAX_OUTPUT = 4_096;

type ModelConfig = ServiceConfigInput['models'][number];

/** `<tier>-<generation>` models with a 200k window and a 4,096-token output limit. */
export function clientTestModels(backend: Record<string, unknown>, extra: ModelConfig[] = []): ModelConfig[] {
  const tiers = ['small', 'mid', 'large'] as const;
  const generations = ['older', 'newer'] as const;
  const models = tiers.flatMap((tier) =>
    generations.map((generation): ModelConfig => ({
      id: `${tier}-${generation}`,
      tier,
      generation,
      contextWindow: CONTEXT_WINDOW,
      maxOutputTokens: MAX_OUTPUT,
      backend: { type: 'scripted', faults: true, ...backend },
    })),
  );
  return [...models, ...extra];
}

/** clientTestModels, each model named in `scripts` answering from a script file of its own (model id -> file). */
export function modelsOnScripts(scripts: Record<string, string>): ModelConfig[] {
  return clientTestModels({}).map((model) => {
    const script = scripts[model.id];
    return script === undefined ? model : { ...model, backend: { type: 'scripted' as const, script } };
  });
}

/** Writes `files` (name -> JSON value) into a fresh folder and returns it. */
export function scriptFolder(files: Record<string, unknown>): string {
  const folder = mkdtempSync(join(tmpdir(), 'mms-client-'));
  for (const [name, value] of Object.entries(files)) writeFileSync(join(folder, name), JSON.stringify(value));
  return folder;
}

export async function startClientService(
  files: Record<string, unknown>,
  config: Partial<ServiceConfigInput> & { backend?: Record<string, unknown>; extraModels?: ModelConfig[] },
): Promise<RunningService> {
  const folder = scriptFolder(files);
  const { backend = {}, extraModels = [], ...rest } = config;
  return startService({ models: clientTestModels(backend, extraModels), ...rest }, folder);
}

export interface Recorder {
  fetch: typeof fetch;
  /** Parsed body of every request, in order. */
  bodies: Array<Record<string, unknown> & { messages: Array<{ role: string; content: unknown }>; max_tokens: number }>;
  headers: Array<Record<string, string>>;
}

/** A fetch that records requests and adds `mms-fault: faults[i]` to the i-th (when set). */
export function recorder(faults: Array<string | undefined> | ((index: number) => string | undefined) = []): Recorder {
  const bodies: Recorder['bodies'] = [];
  const headers: Recorder['headers'] = [];
  const faultFor = typeof faults === 'function' ? faults : (index: number) => faults[index];
  const recording: typeof fetch = async (input, init) => {
    const index = bodies.length;
    bodies.push(JSON.parse(String(init?.body)));
    const sent = { ...(init?.headers as Record<string, string>) };
    const fault = faultFor(index);
    if (fault) sent['mms-fault'] = fault;
    headers.push(sent);
    return fetch(input, { ...init, headers: sent });
  };
  return { fetch: recording, bodies, headers };
}

export function clientFor(baseURL: string, apiKey: string, options: Partial<ClientOptions> = {}): Client {
  const spec = (id: string) => ({ id, contextWindow: CONTEXT_WINDOW, maxOutputTokens: MAX_OUTPUT });
  return new Client({
    baseURL,
    apiKey,
    models: { small: spec('small-newer'), mid: spec('mid-newer'), large: spec('large-newer') },
    backoff: { initialMs: 20, maxMs: 100 },
    timeoutMs: 30_000,
    ...options,
  });
}
