/**
 * Shared set-up of the conformance suite: one service (scripted models, faults on, a script) per
 * test file, and the unmodified official client pointed at it.
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type { Message, Tool } from '@anthropic-ai/sdk/resources/messages';
import { startService, scriptedModels, type RunningService } from '@mms/testing';

/** The version the 1.x official client sends unless told otherwise (docs/decisions/0004). */
export const SDK_V1_DEFAULT_VERSION = '2026-10-21';

export const MODEL_IDS = ['small-older', 'small-newer', 'mid-older', 'mid-newer', 'large-older', 'large-newer'];

export const SCRIPT = [
  {
    when: '^weather in Paris\\?$',
    steps: [
      [
        { type: 'text', text: 'Let me look that up.' },
        { type: 'tool_use', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
      ],
      [{ type: 'text', text: 'It is 21 degrees and sunny in Paris.' }],
    ],
  },
];

export const WEATHER_TOOL: Tool = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
    additionalProperties: false,
  },
};

export const BOOKING_TOOL: Tool = {
  name: 'book_flight',
  description: 'Books a flight between two airports.',
  strict: true,
  input_schema: {
    type: 'object',
    properties: {
      from: { type: 'string', description: 'IATA code of the departure airport' },
      to: { type: 'string', description: 'IATA code of the arrival airport' },
      passengers: { type: 'integer' },
      cabin: { type: 'string', enum: ['economy', 'business'] },
    },
    required: ['from', 'to', 'passengers', 'cabin'],
    additionalProperties: false,
  },
};

export interface Conformance {
  service: RunningService;
  client: Anthropic;
}

/** Registers before/after hooks that start and stop the service; fields are set once `before` ran. */
export function useConformanceService(): Conformance {
  const conformance = {} as Conformance;
  let scriptFolder = '';
  before(async () => {
    scriptFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'mms-'));
    const scriptPath = path.join(scriptFolder, 'script.json');
    fs.writeFileSync(scriptPath, JSON.stringify(SCRIPT));
    conformance.service = await startService({ models: scriptedModels({ faults: true, script: scriptPath }) });
    conformance.client = sdkClient(conformance);
  });
  after(async () => {
    await conformance.service.close();
    fs.rmSync(scriptFolder, { recursive: true, force: true });
  });
  return conformance;
}

/** The unmodified SDK, configured only through its public options. */
export function sdkClient(
  conformance: Conformance,
  options: ConstructorParameters<typeof Anthropic>[0] = {},
): Anthropic {
  return new Anthropic({
    baseURL: conformance.service.baseURL,
    apiKey: conformance.service.apiKey,
    maxRetries: 0,
    ...options,
  });
}

/** Resolves with the rejection of `promise`; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the call to be rejected');
}

/** The error envelope the SDK keeps on `APIError.error`. */
export interface Envelope {
  type: string;
  error: { type: string; message: string };
  request_id: string;
}

/** Asserts the discriminant `type` and narrows to that member of the union. */
export function assertType<T extends { type: string }, K extends T['type']>(
  value: T | undefined,
  type: K,
): asserts value is Extract<T, { type: K }> {
  assert.equal(value?.type, type);
}

/** A message as plain JSON (undefined fields dropped), without its id. */
export function plainWithoutId(message: Message): Record<string, unknown> {
  const { id: _id, ...rest } = JSON.parse(JSON.stringify(message)) as Record<string, unknown>;
  return rest;
}
