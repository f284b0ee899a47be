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
  service = await startService({
    models: [
      {
        id: 'thinker',
        tier: 'mid',
        generation: 'older',
        contextWindow: 2048,
        maxOutputTokens: 512,
        backend: { type: 'llama-cpp', model, threads: 1, chatWrapper: 'qwen', seed: 1, thinkingShare: 0.5 },
      },
    ],
  });
});
after(() => service.close());

interface Reply {
  content: Array<{ type: string; thinking?: string; signature?: string; text?: string }>;
  usage: { output_tokens: number };
  stop_reason: string;
}

async function ask(prompt: string, thinking: { type: string }): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', {
    model: 'thinker',
    max_tokens: 40,
    thinking,
    messages: [{ role: 'user', content: prompt }],
  });
  assert.equal(response.status, 200);
  return (await response.json()) as Reply;
}

// Two prompts, so two samples under the fixed seed: one model, loaded once.
for (const prompt of ['Hi', 'Hello there']) {
  test(`adaptive: thought segments become signed thinking blocks (${prompt})`, async () => {
    const reply = await ask(prompt, { type: 'adaptive' });
    const thinking = reply.content.filter((block) => block.type === 'thinking');
    assert.ok(thinking.length > 0, JSON.stringify(reply.content));
    for (const block of thinking) assert.match(block.signature ?? '', /^mms1\.[A-Za-z0-9_-]{22}$/);
    assert.equal(reply.usage.output_tokens, 40);
  });

  test(`disabled: no thinking block at all (${prompt})`, async () => {
    const reply = await ask(prompt, { type: 'disabled' });
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['text'],
    );
    assert.equal(reply.usage.output_tokens, 40);
  });
}
