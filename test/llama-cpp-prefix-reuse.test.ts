/**
 * Prefix reuse on the embedded llama.cpp engine, on the tiny random-weight GGUF, through the
 * official SDK: a request that starts as an earlier one did evaluates only the rest, reports
 * the reused tokens as cache_read_input_tokens, and answers exactly as a cold engine does (greedy
 * decoding); concurrent and cancelled requests keep each sequence's state consistent. A model
 * entry with `reusePrefix: false` is the cold engine that outputs are compared with.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { LlamaChat, resolveChatWrapper, type ChatHistoryItem } from 'node-llama-cpp';
import { llamaRuntime } from '../packages/server/src/backends/llama-cpp/llama-runtime.js';
import { startService, tinyLlamaModel, type RunningService } from '@model-messages/testing';
import { reusablePrefix } from '../packages/server/src/backends/llama-cpp/sequence-pool.js';

let service: RunningService;
let client: Anthropic;
let modelPath: string;

const entry = (id: string, backend: Record<string, unknown>) => ({
  id,
  tier: 'mid' as const,
  generation: 'newer' as const,
  contextWindow: 2048,
  maxOutputTokens: 256,
  backend: { type: 'llama-cpp' as const, model: modelPath, threads: 1, ...backend },
});

before(async () => {
  modelPath = await tinyLlamaModel();
  service = await startService({
    models: [
      entry('warm', { concurrency: 2 }),
      entry('cold', { concurrency: 1, reusePrefix: false }),
      entry('four', { concurrency: 4 }),
      entry('pair', { concurrency: 2 }),
    ],
  });
  client = new Anthropic({ baseURL: service.baseURL, apiKey: service.apiKey, maxRetries: 0 });
});
after(() => service.close());

const SYSTEM = 'You are a patient assistant for a lighthouse keeper. '.repeat(12);

type Messages = Anthropic.MessageParam[];

/** A conversation of `turns` user turns, distinct per `topic`, with fixed assistant replies between them. */
function conversation(topic: string, turns: number): Messages {
  const messages: Messages = [];
  for (let turn = 0; turn < turns; turn += 1) {
    if (turn > 0) messages.push({ role: 'assistant', content: `Noted, ${topic} ${turn}.` });
    messages.push({ role: 'user', content: `Tell me about ${topic}, part ${turn + 1}, in detail please.` });
  }
  return messages;
}

async function ask(model: string, messages: Messages, system: Anthropic.MessageCreateParams['system'] = SYSTEM) {
  return client.messages.create({ model, max_tokens: 12, temperature: 0, system, messages });
}

const textOf = (message: Anthropic.Message) =>
  message.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('');

async function promptTokens(messages: Messages, system: Anthropic.MessageCreateParams['system'] = SYSTEM) {
  return (await client.messages.countTokens({ model: 'warm', system, messages })).input_tokens;
}

/** The usage split adds up to the prompt: evaluated + reused + written at a breakpoint. */
function assertSplit(usage: Anthropic.Usage, prompt: number): void {
  assert.equal(
    usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
    prompt,
    JSON.stringify(usage),
  );
}

describe('prefix reuse', () => {
  test('node-llama-cpp evaluates exactly the tokens reusablePrefix says it will not keep', async () => {
    const llama = await llamaRuntime('none');
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ contextSize: 1024, threads: 1 });
    const sequence = context.getSequence();
    const chatWrapper = resolveChatWrapper(model);
    const history = (turns: number): ChatHistoryItem[] => [
      { type: 'system', text: SYSTEM },
      ...conversation('tides', turns).map((message): ChatHistoryItem =>
        message.role === 'user'
          ? { type: 'user', text: message.content as string }
          : { type: 'model', response: [message.content as string] },
      ),
      { type: 'model', response: [] },
    ];
    try {
      // The last prompt again: held whole, and its last token evaluated again all the same.
      for (const turns of [1, 2, 3, 3]) {
        const tokens = chatWrapper
          .generateContextState({ chatHistory: history(turns) })
          .contextText.tokenize(model.tokenizer);
        const kept = reusablePrefix(sequence, tokens);
        if (turns > 1) assert.ok(kept > 0, `turn ${turns} keeps a prefix`);
        const before = sequence.tokenMeter.usedInputTokens;
        const chat = new LlamaChat({ contextSequence: sequence, chatWrapper, autoDisposeSequence: false });
        await chat.generateResponse(history(turns), { maxTokens: 4, temperature: 0 });
        chat.dispose();
        // The meter counts a token whose logits are read as output: the prompt's last one.
        assert.equal(sequence.tokenMeter.usedInputTokens - before, tokens.length - kept - 1, `turn ${turns}`);
      }
    } finally {
      await context.dispose();
      await model.dispose();
    }
  });

  test('a second request sharing a prefix reads it from the cache and answers as a cold engine does', async () => {
    const first = conversation('storms', 1);
    const cold = await ask('warm', first);
    assert.equal(cold.usage.cache_read_input_tokens, 0, 'nothing is held yet');
    assertSplit(cold.usage, await promptTokens(first));

    const second = conversation('storms', 2);
    const reused = await ask('warm', second);
    const prompt = await promptTokens(second);
    assertSplit(reused.usage, prompt);
    assert.ok(
      (reused.usage.cache_read_input_tokens ?? 0) >= (await promptTokens(first)) - 8,
      `the first prompt is reused whole but for the template's last tokens: ${JSON.stringify(reused.usage)}`,
    );
    const coldAnswer = await ask('cold', second);
    assert.equal(coldAnswer.usage.cache_read_input_tokens, 0);
    assert.equal(coldAnswer.usage.input_tokens, prompt);
    assert.equal(textOf(reused), textOf(coldAnswer));
  });

  test('concurrent conversations get distinct sequences, correct answers, and each keeps its own prefix', async () => {
    const topics = ['harbours', 'beacons'];
    const expected = await Promise.all(topics.map((topic) => ask('cold', conversation(topic, 2))));
    const together = await Promise.all(topics.map((topic) => ask('warm', conversation(topic, 2))));
    assert.deepEqual(together.map(textOf), expected.map(textOf));
    // Each went on its own sequence, so each one's next turn finds all of its own prompt held.
    const next = await Promise.all(topics.map((topic) => ask('warm', conversation(topic, 3))));
    for (const [index, topic] of topics.entries()) {
      const reply = next[index]!;
      const held = await promptTokens(conversation(topic, 2));
      assertSplit(reply.usage, await promptTokens(conversation(topic, 3)));
      assert.ok((reply.usage.cache_read_input_tokens ?? 0) >= held - 8, `${topic}: ${JSON.stringify(reply.usage)}`);
    }
  });

  test('a cancelled request leaves its sequence consistent: the next request reports true counts and the cold answer', async () => {
    const messages = conversation('fog', 2);
    const stream = client.messages.stream({
      model: 'warm',
      max_tokens: 200,
      temperature: 0,
      system: SYSTEM,
      messages,
    });
    await new Promise<void>((resolve) => stream.on('text', () => resolve()));
    stream.abort();
    await stream.done().catch(() => undefined);
    const admission = service.registry.resolve('warm').admission;
    while (admission.stats.active > 0) await new Promise((resolve) => setTimeout(resolve, 5));

    const again = await ask('warm', messages);
    assertSplit(again.usage, await promptTokens(messages));
    assert.ok((again.usage.cache_read_input_tokens ?? 0) > 0, JSON.stringify(again.usage));
    assert.equal(textOf(again), textOf(await ask('cold', messages)));
  });

  test('a cache_control breakpoint counts the tokens before it as written once, then read', async () => {
    const system = [
      { type: 'text' as const, text: `${SYSTEM} Breakpoint here.`, cache_control: { type: 'ephemeral' as const } },
    ];
    const messages = conversation('gulls', 1);
    const written = await ask('warm', messages, system);
    const prompt = await promptTokens(messages, system);
    assertSplit(written.usage, prompt);
    assert.ok((written.usage.cache_creation_input_tokens ?? 0) > 0, JSON.stringify(written.usage));
    assert.ok(written.usage.input_tokens > 0, 'the user turn after the breakpoint is input');

    const read = await ask('warm', conversation('gulls', 2), system);
    assertSplit(read.usage, await promptTokens(conversation('gulls', 2), system));
    assert.equal(read.usage.cache_creation_input_tokens, 0, 'the marked prefix is held already');
    assert.ok((read.usage.cache_read_input_tokens ?? 0) >= (written.usage.cache_creation_input_tokens ?? 0));
  });

  test('four concurrent requests on four sequences all complete with the cold answers', async () => {
    const topics = ['keels', 'masts', 'sails', 'anchors'];
    const expected = await Promise.all(topics.map((topic) => ask('cold', conversation(topic, 1))));
    const replies = await Promise.all(topics.map((topic) => ask('four', conversation(topic, 1))));
    assert.deepEqual(replies.map(textOf), expected.map(textOf));
    for (const reply of replies) assert.ok(reply.usage.output_tokens > 0 && reply.stop_reason !== null);
  });
});

describe('batched generations under cancellation', () => {
  test('one of four concurrent requests cancelled mid-stream: the other three answer as the cold engine does', async () => {
    const topics = ['tides', 'shoals', 'reefs'];
    const long = (model: string, topic: string) =>
      client.messages.create({
        model,
        max_tokens: 40,
        temperature: 0,
        system: SYSTEM,
        messages: conversation(topic, 1),
      });
    const expected = await Promise.all(topics.map((topic) => long('cold', topic)));
    const cancelled = client.messages.stream({
      model: 'four',
      max_tokens: 200,
      temperature: 0,
      system: SYSTEM,
      messages: conversation('squalls', 1),
    });
    const replies = Promise.all(topics.map((topic) => long('four', topic)));
    // Cancelled once it decodes alongside the others: they go on without it in their batches.
    await new Promise<void>((resolve) => cancelled.on('text', () => resolve()));
    cancelled.abort();
    await cancelled.done().catch(() => undefined);
    assert.deepEqual((await replies).map(textOf), expected.map(textOf));
  });
});

describe('a prefix copied from another sequence', () => {
  test('a new conversation under the same system prompt copies it from the sequence holding it, and answers as cold', async () => {
    // Sequence 0 holds the system prompt under a long conversation: more than twice what a new
    // conversation shares with it, so the new one takes the empty sequence 1, and copies the prefix.
    const long = conversation('harbours', 8);
    await ask('pair', long);
    const held = await promptTokens(long);
    const fresh = conversation('lanterns', 1);
    const shared = (await promptTokens([{ role: 'user', content: 'x' }])) - 8;
    assert.ok(held > 2 * shared, `${held} tokens held, about ${shared} shared`);
    const copied = await ask('pair', fresh);
    assertSplit(copied.usage, await promptTokens(fresh));
    assert.ok(
      (copied.usage.cache_read_input_tokens ?? 0) >= shared,
      `the system prompt came from the other sequence: ${JSON.stringify(copied.usage)}`,
    );
    assert.equal(textOf(copied), textOf(await ask('cold', fresh)));
    // The source kept its conversation: its next turn reuses all of it.
    const next = await ask('pair', conversation('harbours', 9));
    assert.ok((next.usage.cache_read_input_tokens ?? 0) >= held - 8, JSON.stringify(next.usage));
  });

  test('a new conversation while another generates on the sequence holding the prefix answers as cold', async () => {
    const running = client.messages.stream({
      model: 'pair',
      max_tokens: 200,
      temperature: 0,
      system: SYSTEM,
      messages: conversation('currents', 2),
    });
    await new Promise<void>((resolve) => running.on('text', () => resolve()));
    const fresh = conversation('buoys', 1);
    const reply = await ask('pair', fresh);
    await running.done().catch(() => undefined);
    assertSplit(reply.usage, await promptTokens(fresh));
    assert.ok((reply.usage.cache_read_input_tokens ?? 0) > 0, JSON.stringify(reply.usage));
    assert.equal(textOf(reply), textOf(await ask('cold', fresh)));
  });
});
