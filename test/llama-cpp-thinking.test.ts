/**
 * Thinking on the embedded engine, through a model's own thinking format (Qwen's `<think>`
 * segments, forced with chatWrapper: 'qwen'). The tiny model's weights favour `<think>` and a
 * newline, so with a fixed seed it opens thought segments; the service must turn them into
 * signed thinking blocks under `adaptive`, keep them within the thinking share of max_tokens,
 * and suppress them under `disabled`. Usage counts every sampled token, invisible ones too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, startService, tinyLlamaModel, type RunningService } from '@model-messages/testing';

let service: RunningService;
before(async () => {
  const model = await tinyLlamaModel({
    specialTokens: ['<think>', '</think>', '<tool_call>', '</tool_call>'],
    logitBias: { '<think>': 5, '<0x0A>': 4, '</think>': 3 },
  });
  const entry = (seed: number) => ({
    id: `thinker-${seed}`,
    tier: 'mid' as const,
    generation: 'older' as const,
    contextWindow: 2048,
    maxOutputTokens: 512,
    backend: { type: 'llama-cpp' as const, model, threads: 1, chatWrapper: 'qwen' as const, seed, thinkingShare: 0.5 },
  });
  service = await startService({ models: [entry(1), entry(2)] });
});
after(() => service.close());

interface Reply {
  content: Array<{ type: string; thinking?: string; signature?: string; text?: string }>;
  usage: { output_tokens: number };
  stop_reason: string;
}

async function ask(model: string, thinking: { type: string }): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', {
    model,
    max_tokens: 40,
    thinking,
    messages: [{ role: 'user', content: 'Hi' }],
  });
  assert.equal(response.status, 200);
  return (await response.json()) as Reply;
}

for (const model of ['thinker-1', 'thinker-2']) {
  test(`adaptive: thought segments become signed thinking blocks (${model})`, async () => {
    const reply = await ask(model, { type: 'adaptive' });
    const thinking = reply.content.filter((block) => block.type === 'thinking');
    assert.ok(thinking.length > 0, JSON.stringify(reply.content));
    for (const block of thinking) assert.match(block.signature ?? '', /^mms1\.[A-Za-z0-9_-]{22}$/);
    assert.equal(reply.usage.output_tokens, 40);
  });

  test(`disabled: no thinking block at all (${model})`, async () => {
    const reply = await ask(model, { type: 'disabled' });
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['text'],
    );
    assert.equal(reply.usage.output_tokens, 40);
  });
}
