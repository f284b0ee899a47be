/**
 * A long prompt's tokens through the kept runs (tokenized-runs.ts, prompt-tokenizer.ts): always
 * exactly what node-llama-cpp's own tokenizing of the whole prompt gives, on the first turn and
 * on the next ones, whether the runs missing are tokenized on the loop or in the tokenizer
 * thread; and a later turn tokenizes only what is new in it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatMLChatWrapper, type ChatHistoryItem, type LlamaModel, type Token } from 'node-llama-cpp';
import { llamaRuntime } from '../src/backends/llama-cpp/llama-runtime.js';
import { tokenizerThread } from '../src/backends/llama-cpp/shared-tokenizer-thread.js';
import { tinyLlamaModel } from '@model-messages/testing';
import { IN_LOOP_CHARACTERS, PromptTokenizer } from '../src/backends/llama-cpp/prompt-tokenizer.js';
import { KEPT_RUN_CHARACTERS } from '../src/backends/llama-cpp/tokenized-runs.js';

let model: LlamaModel;
let tokenizer: PromptTokenizer;
// The tokenizer thread does not keep a process alive (a service's server does): this does, here.
const keepAlive = setInterval(() => {}, 60_000);
before(async () => {
  const llama = await llamaRuntime('none');
  const modelPath = await tinyLlamaModel();
  model = await llama.loadModel({ modelPath });
  tokenizer = new PromptTokenizer(modelPath);
});
after(async () => {
  clearInterval(keepAlive);
  await tokenizer.close();
  await model.dispose();
});

const wrapper = new ChatMLChatWrapper();
/** Varied words, so that the text is not one token repeated. */
function words(characters: number, seed: number): string {
  const pool = ['keeper', 'lamp', 'storm', 'tide', 'harbour', 'beacon', 'rope', 'ledger', 'signal', 'reef', 'é', '灯'];
  let text = '';
  for (let index = 0; text.length < characters; index += 1) text += `${pool[(index * 7 + seed) % pool.length]} `;
  return text;
}

function conversation(system: string, turns: string[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [{ type: 'system', text: system }];
  turns.forEach((text, index) =>
    history.push(index % 2 === 0 ? { type: 'user', text } : { type: 'model', response: [text] }),
  );
  return history;
}

function rendered(history: ChatHistoryItem[]) {
  return wrapper.generateContextState({ chatHistory: history }).contextText;
}

/** `model` with its tokenizer counting the characters it is given. */
function counting(): { model: LlamaModel; characters: () => number } {
  let characters = 0;
  const own = model.tokenizer;
  const spy = ((text: string, ...rest: unknown[]) => {
    characters += text.length;
    return (own as (...args: unknown[]) => Token[])(text, ...rest);
  }) as typeof own;
  const proxy = new Proxy(model, {
    get: (target, property) => {
      if (property === 'tokenizer') return spy;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { model: proxy, characters: () => characters };
}

test('a long prompt is tokenized exactly as node-llama-cpp tokenizes it, turn after turn', async () => {
  const system = words(12_000, 1);
  const turns: string[] = [];
  for (let turn = 0; turn < 4; turn += 1) {
    turns.push(`Question ${turn}: what next?`);
    const text = rendered(conversation(system, turns));
    assert.deepEqual(await tokenizer.tokenize(text, 1_000_000, model), text.tokenize(model.tokenizer), `turn ${turn}`);
    turns.push(words(200, turn));
  }
});

test('a later turn tokenizes only what is new: the long system prompt is not tokenized again', async () => {
  const system = words(20_000, 2);
  const first = rendered(conversation(system, ['Hello there']));
  await tokenizer.tokenize(first, 1_000_000, model);
  const spied = counting();
  const second = rendered(conversation(system, ['Hello there', 'A reply.', 'And again?']));
  assert.deepEqual(await tokenizer.tokenize(second, 1_000_000, spied.model), second.tokenize(model.tokenizer));
  assert.ok(spied.characters() < 200, `${spied.characters()} characters tokenized again`);
});

test('runs missing beyond the loop budget go to the tokenizer thread, and still match', async () => {
  // Two long runs, together past IN_LOOP_CHARACTERS, neither seen before.
  const text = rendered(conversation(words(IN_LOOP_CHARACTERS, 3), [words(IN_LOOP_CHARACTERS, 4)]));
  const spied = counting();
  assert.deepEqual(await tokenizer.tokenize(text, 1_000_000, spied.model), text.tokenize(model.tokenizer));
  assert.ok(spied.characters() < KEPT_RUN_CHARACTERS, 'the long runs were not tokenized on the loop');
});

test('many short runs past the budget: the whole prompt in the thread, exact', async () => {
  const turns = Array.from({ length: 400 }, (_, index) => `turn ${index} ${words(30, index)}`);
  const text = rendered(conversation('Be brief.', turns));
  assert.ok(turns.join('').length > IN_LOOP_CHARACTERS);
  const spied = counting();
  assert.deepEqual(await tokenizer.tokenize(text, 1_000_000, spied.model), text.tokenize(model.tokenizer));
  assert.ok(spied.characters() <= IN_LOOP_CHARACTERS + KEPT_RUN_CHARACTERS, `${spied.characters()} on the loop`);
});

test('a prompt whose long runs are more than is kept still comes out whole and exact', async () => {
  // Room for one run of 1,500 characters: keeping each of this prompt's runs drops the one before.
  const small = new PromptTokenizer(await tinyLlamaModel(), 2_000);
  try {
    const text = rendered(conversation(words(1_500, 5), [words(1_500, 6), words(1_500, 7), words(1_500, 8)]));
    assert.deepEqual(await small.tokenize(text, 1_000_000, model), text.tokenize(model.tokenizer));
    assert.deepEqual(await small.tokenize(text, 1_000_000, model), text.tokenize(model.tokenizer), 'again');
  } finally {
    await small.close();
  }
});

test('one tokenizer thread serves every model file; closing one file leaves the others their vocabulary', async () => {
  const otherPath = await tinyLlamaModel({ extraWords: 40, seed: 11 });
  const other = await (await llamaRuntime('none')).loadModel({ modelPath: otherPath, vocabOnly: true });
  const otherTokenizer = new PromptTokenizer(otherPath);
  try {
    // All in the thread: one long run, past the loop's budget.
    const text = rendered(conversation(words(IN_LOOP_CHARACTERS * 2, 9), ['Hello']));
    assert.notDeepEqual(text.tokenize(other.tokenizer), text.tokenize(model.tokenizer), 'two vocabularies');
    assert.deepEqual(await tokenizer.tokenize(text, 1_000_000, model), text.tokenize(model.tokenizer));
    const thread = tokenizerThread.threadId();
    assert.ok(thread !== undefined);
    assert.deepEqual(await otherTokenizer.tokenize(text, 1_000_000, other), text.tokenize(other.tokenizer));
    assert.equal(tokenizerThread.threadId(), thread, 'the same thread');

    await otherTokenizer.close();
    const next = rendered(conversation(words(IN_LOOP_CHARACTERS * 2, 10), ['Hello']));
    assert.deepEqual(await tokenizer.tokenize(next, 1_000_000, model), next.tokenize(model.tokenizer));
    // A file opened again after its last tokenizer closed is read again in the thread.
    const again = new PromptTokenizer(otherPath);
    try {
      assert.deepEqual(await again.tokenize(next, 1_000_000, other), next.tokenize(other.tokenizer));
    } finally {
      await again.close();
    }
    assert.equal(tokenizerThread.threadId(), thread);
  } finally {
    await otherTokenizer.close();
    await other.dispose();
  }
});
