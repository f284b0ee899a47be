/**
 * Shared set-up of the conformance suite: the official clients it drives, each unmodified, and one
 * service (scripted models, faults on, a script) per client and test file.
 */
import { after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic, * as Sdk0 from '@anthropic-ai/sdk';
import type { ClientOptions } from '@anthropic-ai/sdk';
import type { Message, Tool } from '@anthropic-ai/sdk/resources/messages';
import { VERSION as SDK0_VERSION } from '@anthropic-ai/sdk/version';
import AnthropicV1, * as Sdk1 from '@anthropic-ai/sdk-v1';
import { VERSION as SDK1_VERSION } from '@anthropic-ai/sdk-v1/version';
import type { ApiVersion } from '@model-messages/protocol';
import { startService, scriptedModels, type RunningService } from '@model-messages/testing';

/** What the suite reads of an error an official client throws: the same in 0.137 and 1.x. */
export interface SdkError extends Error {
  readonly status: number | undefined;
  readonly headers: Headers | undefined;
  readonly error: unknown;
  readonly requestID: string | null | undefined;
  readonly type: string | null;
}

type SdkErrorClass = abstract new (...args: never[]) => SdkError;

/** The error classes of one official client that the suite expects. */
export interface SdkErrorClasses {
  APIError: SdkErrorClass;
  AuthenticationError: SdkErrorClass;
  BadRequestError: SdkErrorClass;
  InternalServerError: SdkErrorClass;
  NotFoundError: SdkErrorClass;
  RateLimitError: SdkErrorClass;
  /** A 529's class: 1.x has OverloadedError; 0.137 has none and answers InternalServerError. */
  OverloadedError: SdkErrorClass;
}

/** The public options the suite sets: those both clients take alike. */
export type SuiteClientOptions = Pick<ClientOptions, 'baseURL' | 'apiKey' | 'maxRetries' | 'fetch' | 'defaultHeaders'>;

export interface OfficialClient {
  /** Package and version, as the tests are named. */
  name: string;
  /** The name it is installed under here: 1.x sits beside 0.137 under an alias. */
  moduleName: string;
  /** The `anthropic-version` the client sends when nothing overrides it. */
  apiVersion: ApiVersion;
  /**
   * A client with only the public options given. Typed with 0.137's declarations for both, as
   * their replies are the same types (reply-types.ts checks that at compile time).
   */
  create(options: SuiteClientOptions): Anthropic;
  errors: SdkErrorClasses;
}

export const OFFICIAL_CLIENTS: readonly OfficialClient[] = [
  {
    name: `@anthropic-ai/sdk ${SDK0_VERSION}`,
    moduleName: '@anthropic-ai/sdk',
    apiVersion: '2023-06-01',
    create: (options) => new Anthropic(options),
    errors: { ...Sdk0, OverloadedError: Sdk0.InternalServerError },
  },
  {
    name: `@anthropic-ai/sdk ${SDK1_VERSION}`,
    moduleName: '@anthropic-ai/sdk-v1',
    apiVersion: '2026-10-21',
    // To the compiler the classes are unrelated: each has #private fields, and 1.x dropped the
    // legacy `completions`. The suite uses neither, and what it reads back has the same types.
    create: (options) => new AnthropicV1(options) as unknown as Anthropic,
    errors: Sdk1,
  },
];

export const MODEL_IDS = ['small-older', 'small-newer', 'mid-older', 'mid-newer', 'large-older', 'large-newer'];

export const SCRIPT = [
  {
    // The public API refuses thinking with a forced tool: a thinking call comes from the model's choice.
    when: '^find cats$',
    steps: [
      [
        { type: 'thinking', thinking: 'The user wants cats. I will look them up.' },
        { type: 'tool_use', name: 'lookup', input: { q: 'cats' } },
      ],
      [
        { type: 'thinking', thinking: 'The tool found them.' },
        { type: 'text', text: 'found 3 cats' },
      ],
    ],
  },
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
  official: OfficialClient;
  service: RunningService;
  client: Anthropic;
}

/** Runs `suite` once per official client, each in a describe named after the client. */
export function forEachOfficialClient(suite: (official: OfficialClient) => void): void {
  for (const official of OFFICIAL_CLIENTS) describe(official.name, () => suite(official));
}

/**
 * Registers before/after hooks that start and stop the service; fields are set once `before` ran.
 * Called inside a describe, the service lives as long as that describe.
 */
export function useConformanceService(official: OfficialClient): Conformance {
  const conformance = { official } as Conformance;
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

/** The unmodified official client, configured only through its public options. */
export function sdkClient(conformance: Conformance, options: SuiteClientOptions = {}): Anthropic {
  return conformance.official.create({
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
