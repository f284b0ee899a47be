/**
 * count_tokens when the engine's tokenizer endpoint is not there (a router that forwards only
 * `/v1/*`, a llama.cpp server older than `/apply-template`): the request is still answered,
 * counted by the estimate, with one warning, and the endpoint is asked again only after a
 * while, on a clock the test steps.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeOpenAiEngine, postJson, startService, type RunningService } from '@mms/testing';
import { TOKENIZER_RETRY_MS } from '../packages/server/src/backends/openai-compatible/prompt-token-counter.js';
import { user } from './openai-compatible-support.js';

describe('a tokenizer endpoint that is not served', () => {
  const clock = { now: 0 };
  const warnings: string[] = [];
  let service: RunningService;
  let vllm: FakeOpenAiEngine;
  let llama: FakeOpenAiEngine;
  before(async () => {
    vllm = await FakeOpenAiEngine.start('vllm');
    llama = await FakeOpenAiEngine.start('llama.cpp');
    // A router in front of vLLM that forwards only /v1/*; a llama.cpp older than /apply-template.
    vllm.missingPaths.add('/tokenize');
    llama.missingPaths.add('/apply-template');
    const model = (id: string, engine: FakeOpenAiEngine) => ({
      id,
      tier: 'mid' as const,
      generation: 'newer' as const,
      contextWindow: 8192,
      maxOutputTokens: 4096,
      backend: { type: 'openai-compatible' as const, engine: engine.kind, baseURL: engine.baseURL, model: engine.model },
    });
    service = await startService({ models: [model('routed', vllm), model('old-llama', llama)] }, process.cwd(), { registry: { now: () => clock.now, warn: (line) => warnings.push(line) } });
  });
  after(async () => {
    await service.close();
    await vllm.close();
    await llama.close();
  });
  const tokenizeCalls = () => vllm.requests.filter((request) => request.path === '/tokenize').length;

  test('requests are answered, counted by estimate; one warning; the endpoint is left alone for a while, then asked again', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await postJson(service, '/v1/messages', { model: 'routed', max_tokens: 50, messages: [user('Hello')] });
      assert.equal(response.status, 200, await response.clone().text());
    }
    assert.equal(tokenizeCalls(), 1);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^routed: openai-compatible:vllm at http:\/\/127\.0\.0\.1:\d+\/v1: the engine's tokenizer endpoint failed \(.*404.*\); prompts are counted by estimate/);
    const counted = (await (await postJson(service, '/v1/messages/count_tokens', { model: 'routed', messages: [user('Hello')] })).json()) as { input_tokens: number };
    assert.equal(counted.input_tokens, Math.ceil('Hello'.length / 4) + 4);
    clock.now += TOKENIZER_RETRY_MS;
    const again = await postJson(service, '/v1/messages', { model: 'routed', max_tokens: 50, messages: [user('Hello')] });
    assert.equal(again.status, 200);
    assert.equal(tokenizeCalls(), 2);
    assert.equal(warnings.length, 1, 'logged once per backend, not per failure');
  });

  test('a llama.cpp server without /apply-template answers too', async () => {
    const response = await postJson(service, '/v1/messages', { model: 'old-llama', max_tokens: 50, messages: [user('Hello')] });
    assert.equal(response.status, 200, await response.clone().text());
    assert.match(warnings.at(-1)!, /^old-llama: openai-compatible:llama\.cpp .*tokenizer endpoint failed/);
  });
});
