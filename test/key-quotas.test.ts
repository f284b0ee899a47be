/**
 * The keys' quotas, tokens per UTC day and month (issue 37), end to end: past a day quota a
 * request is a 429 rate_limit_error with retry-after at midnight UTC and the `mms-quota-*`
 * headers, which successes carry too; and a single `mms serve` with the memory store, killed
 * mid-day (SIGKILL: nothing is flushed on the way out) and started again on the same data folder,
 * goes on from the count it had. test/key-limits-redis.test.ts runs a day quota across replicas.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { scriptedModels, startService, type RunningService } from '@model-messages/testing';
import { listeningPort, MMS } from './mms-command.js';

const KEY = 'mms-quota-key-0123456789abcdef';
const HASH = `sha256:${createHash('sha256').update(KEY).digest('hex')}`;

/** Midnight UTC after now, as the reset headers write it. */
function nextMidnight(): Date {
  const midnight = new Date();
  midnight.setUTCHours(24, 0, 0, 0);
  return midnight;
}

function ask(baseURL: string, text = 'hello there') {
  return new Anthropic({ baseURL, apiKey: KEY, maxRetries: 0 }).messages
    .create({ model: 'mid', max_tokens: 16, messages: [{ role: 'user', content: text }] })
    .withResponse();
}

async function refused(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await promise.then(
    () => assert.fail('expected a 429'),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof Anthropic.APIError, String(error));
  return error;
}

describe('a day quota', () => {
  let service: RunningService;
  before(async () => {
    service = await startService({
      models: scriptedModels(),
      keys: [{ id: 'daily', hash: HASH, limits: { tokensPerDay: 60, requestsPerMinute: 1000 } }],
    });
  });
  after(() => service.close());

  test('counts input and output tokens; past it a 429 with retry-after at midnight UTC and the quota headers', async () => {
    const first = await ask(service.baseURL);
    const usage = first.data.usage;
    assert.equal(first.response.headers.get('mms-quota-tokens-day-limit'), '60');
    // At admission the input is charged; the output once the reply ends.
    assert.equal(first.response.headers.get('mms-quota-tokens-day-remaining'), String(60 - usage.input_tokens));
    const midnight = `${nextMidnight().toISOString().slice(0, 19)}Z`;
    assert.equal(first.response.headers.get('mms-quota-tokens-day-reset'), midnight);
    assert.equal(first.response.headers.get('anthropic-ratelimit-requests-limit'), '1000');
    let spent = usage.input_tokens + usage.output_tokens;
    let error: InstanceType<typeof Anthropic.APIError> | undefined;
    for (let sent = 0; sent < 20 && error === undefined; sent += 1) {
      const outcome = await ask(service.baseURL).then(
        (reply) => reply,
        (thrown: unknown) => thrown,
      );
      if (outcome instanceof Anthropic.APIError) error = outcome;
      else if (outcome instanceof Error) throw outcome;
      else
        spent += (outcome as typeof first).data.usage.input_tokens + (outcome as typeof first).data.usage.output_tokens;
    }
    assert.ok(error, 'no 429 within 20 requests');
    assert.equal(error.status, 429);
    assert.equal(error.type, 'rate_limit_error');
    assert.equal(error.headers?.get('mms-error-code'), 'rate_limited');
    assert.match(error.message, /quota of 60 tokens per day \(UTC\) is used up/);
    const retryAfter = Number(error.headers?.get('retry-after'));
    const untilMidnight = (nextMidnight().getTime() - Date.now()) / 1000;
    assert.ok(Math.abs(retryAfter - untilMidnight) <= 2, `retry-after ${retryAfter}, midnight in ${untilMidnight}`);
    assert.equal(error.headers?.get('mms-quota-tokens-day-remaining'), String(Math.max(0, 60 - spent)));
    assert.equal(error.headers?.get('mms-quota-tokens-day-reset'), midnight);
    assert.equal(error.headers?.get('anthropic-ratelimit-requests-limit'), '1000', 'and the per-minute headers');
  });
});

describe('a single instance restarted mid-day', () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-quota-restart-'));
  const dataFolder = join(folder, 'data');
  const config = join(folder, 'config.json');
  let child: ChildProcess | undefined;
  before(() => {
    const models = [
      { id: 'mid-newer', aliases: ['mid'], tier: 'mid', generation: 'newer', contextWindow: 4096, maxOutputTokens: 64 },
    ].map((model) => ({ ...model, backend: { type: 'scripted' } }));
    const keys = [{ id: 'daily', hash: HASH, limits: { tokensPerDay: 100 } }];
    writeFileSync(config, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, keys, models }));
  });
  after(() => {
    child?.kill('SIGKILL');
    rmSync(folder, { recursive: true, force: true });
  });

  async function serve(): Promise<string> {
    child = spawn(process.execPath, [...MMS, 'serve', '--config', config], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, MMS_DATA_FOLDER: dataFolder },
    });
    return `http://127.0.0.1:${await listeningPort(child)}`;
  }

  async function kill(): Promise<void> {
    const exited = once(child!, 'exit');
    child!.kill('SIGKILL');
    await exited;
  }

  test('killed and started again on the same data folder, it goes on from the count it had', async () => {
    let baseURL = await serve();
    let used = 0;
    for (let index = 0; index < 2; index += 1) {
      const { data } = await ask(baseURL);
      used += data.usage.input_tokens + data.usage.output_tokens;
    }
    assert.ok(existsSync(join(dataFolder, 'limits.sqlite')), 'the database is in the data folder');
    await kill();

    baseURL = await serve();
    const { data, response } = await ask(baseURL);
    assert.equal(response.headers.get('mms-quota-tokens-day-remaining'), String(100 - used - data.usage.input_tokens));
    let error: InstanceType<typeof Anthropic.APIError> | undefined;
    for (let sent = 0; sent < 20 && error === undefined; sent += 1) {
      const outcome = await ask(baseURL).catch((thrown: unknown) => thrown);
      if (outcome instanceof Anthropic.APIError) error = outcome;
      else if (outcome instanceof Error) throw outcome;
    }
    assert.ok(error, 'no 429 within 20 requests');
    assert.equal(error.status, 429);
    await kill();

    const left = error.headers?.get('mms-quota-tokens-day-remaining');
    assert.ok(Number(left) < 20, `${left} left, less than a request takes`);
    // Started once more, what is left is still too little, and no more than before.
    baseURL = await serve();
    const still = await refused(ask(baseURL));
    assert.equal(still.status, 429);
    assert.equal(still.headers?.get('mms-quota-tokens-day-remaining'), left);
  });
});
