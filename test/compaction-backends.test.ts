/**
 * Compaction (`compact_20260112`, issue 34) is written by the request's own model, whatever its
 * backend: context-editing.test.ts follows a long session on the scripted backend; here the same
 * edit on an engine. On an OpenAI-compatible engine (vLLM's shape), what the engine is asked: the
 * whole conversation followed by the summary instructions, then a call that starts from the summary
 * alone. On the embedded engine, a tiny GGUF whose output is scripted writes the summary, and the
 * block it signs is accepted when sent back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FakeOpenAiEngine,
  postJson,
  qwenTurnPieces,
  scriptedQwenModel,
  startService,
  type RunningService,
} from '@model-messages/testing';
import { vllmModel } from './openai-compatible-support.js';

interface Reply {
  content: Array<{ type: string; text?: string; content?: string | null; signature?: string | null }>;
  stop_reason: string;
  usage: { input_tokens: number; iterations?: Array<{ type: string; input_tokens: number; output_tokens: number }> };
}

/** A long first message: the conversation to compact. */
const HISTORY = Array.from({ length: 60 }, (_, line) => `note ${line}: the otter ${line} swam upstream.`).join('\n');
const COMPACT = { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 1_024 } }] };

async function send(service: RunningService, model: string, body: Record<string, unknown>): Promise<Reply> {
  const response = await postJson(service, '/v1/messages', { model, max_tokens: 64, ...body });
  const reply = (await response.json()) as Reply;
  assert.equal(response.status, 200, JSON.stringify(reply));
  return reply;
}

describe('compaction on an OpenAI-compatible engine', () => {
  let engine: FakeOpenAiEngine;
  let service: RunningService;
  before(async () => {
    engine = await FakeOpenAiEngine.start('vllm');
    // Its tokenizer endpoint counts every prompt, so the trigger is judged on the engine's count.
    service = await startService({ models: [vllmModel(engine, { countTokens: 'every-request' })] });
  });
  after(async () => {
    await service.close();
    await engine.close();
  });

  /** One streamed chat completion that answers `text`. */
  const answering = (text: string, promptTokens: number) => ({
    stream: [
      { choices: [{ index: 0, delta: { role: 'assistant', content: text } }] },
      {
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        usage: { prompt_tokens: promptTokens, completion_tokens: 8 },
      },
    ],
  });

  test('the engine writes the summary from the whole conversation, then answers from the summary alone', async () => {
    // What the tokenizer endpoint answers for every prompt: past the trigger.
    engine.tokenCount = 2_000;
    engine.reply(answering('The otters swam upstream, notes 0 to 59.', 2_050), answering('Upstream.', 40));
    const reply = await send(service, 'vllm', {
      messages: [{ role: 'user', content: `${HISTORY}\nWhere did the otters swim?` }],
      context_management: COMPACT,
    });
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['compaction', 'text'],
    );
    assert.equal(reply.content[0]!.content, 'The otters swam upstream, notes 0 to 59.');
    assert.match(reply.content[0]!.signature ?? '', /^mms1c\./);
    assert.equal(reply.content[1]!.text, 'Upstream.');
    assert.deepEqual(
      reply.usage.iterations!.map((iteration) => [iteration.type, iteration.input_tokens]),
      [
        ['compaction', 2_050],
        ['message', 40],
      ],
    );
    const [summaryCall, answerCall] = engine.chatBodies().slice(-2) as Array<{
      messages: Array<{ role: string; content: string }>;
    }>;
    // The summary call: the conversation, then the instructions as the last user message.
    const summaryAsk = JSON.stringify(summaryCall!.messages);
    assert.ok(summaryAsk.indexOf('note 59') > 0, summaryAsk);
    assert.ok(summaryAsk.indexOf('Write a summary of the conversation so far') > summaryAsk.indexOf('note 59'));
    assert.equal(summaryCall!.messages.at(-1)!.role, 'user');
    // The answer's call: the summary in place of the conversation.
    const asked = JSON.stringify(answerCall!.messages);
    assert.ok(!asked.includes('note 59'), asked);
    assert.ok(asked.includes('The otters swam upstream, notes 0 to 59.'), asked);
  });
});

describe('compaction on the embedded engine', () => {
  let service: RunningService;
  const SUMMARY = 'Otters swam upstream.';
  before(async () => {
    // The tiny model writes the same text whatever it is asked: the summary, then the answer.
    const model = await scriptedQwenModel(qwenTurnPieces({ text: ['Otters', ' swam', ' upstream.'] }), {
      contextLength: 4_096,
    });
    service = await startService({
      models: [
        {
          id: 'embedded',
          tier: 'mid',
          generation: 'older',
          contextWindow: 4_096,
          maxOutputTokens: 256,
          backend: { type: 'llama-cpp', model, threads: 1, chatWrapper: 'qwen' },
        },
      ],
    });
  });
  after(() => service.close());

  test('the model writes the summary; the reply goes on from it, and the block sent back is accepted', async () => {
    const messages = [{ role: 'user', content: `${HISTORY}\nWhere did the otters swim?` }];
    const reply = await send(service, 'embedded', { messages, context_management: COMPACT, temperature: 0 });
    const [compaction, answer] = reply.content;
    assert.equal(compaction!.type, 'compaction');
    assert.equal(compaction!.content, SUMMARY);
    assert.match(compaction!.signature ?? '', /^mms1c\./);
    assert.equal(answer!.text, SUMMARY);
    const [summarizing, message] = reply.usage.iterations!;
    assert.equal(summarizing!.type, 'compaction');
    // The summary read the whole conversation; the answer only the summary.
    assert.ok(summarizing!.input_tokens > 1_024, String(summarizing!.input_tokens));
    assert.ok(message!.input_tokens < summarizing!.input_tokens / 4, JSON.stringify(reply.usage));
    // Sent back with the block, the next request starts from the summary: under the trigger, no
    // compaction again.
    const next = await send(service, 'embedded', {
      messages: [...messages, { role: 'assistant', content: reply.content }, { role: 'user', content: 'And then?' }],
      context_management: COMPACT,
      temperature: 0,
    });
    assert.equal(next.content[0]!.type, 'text');
    assert.ok(next.usage.input_tokens < 1_024, String(next.usage.input_tokens));
  });
});
