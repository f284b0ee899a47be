/**
 * Replicas of one engine behind one model (issue 36), over HTTP: four fake vLLM replicas in a
 * `balance: "session"` list. A conversation stays on one replica turn after turn, by its
 * `x-claude-code-session-id`, its `metadata.user_id` or its fixed prefix, and two replicas of mms
 * with the same config agree on it. A replica killed mid-run costs its conversations no error
 * before their first output: they move to the next replica on the ring, and the others stay. One
 * coming back takes its conversations back, after its circuit's cool-down or at once when a probe
 * finds it up. A stream cut after its first output stays on its replica and ends in an error
 * (the client already has part of it). The access log names the replica; config mistakes name
 * their field. The circuits' and probes' clock is the test's (no sleeping).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, validateConfig, type ServiceConfigInput } from '@model-messages/server';
import {
  FakeOpenAiEngine,
  loadEngineFixture,
  postJson,
  postStreamWithTrailers,
  startService,
  type RunningService,
} from '@model-messages/testing';

interface Reply {
  content: Array<{ type: string; text?: string }>;
}

const SESSION_HEADER = 'x-claude-code-session-id';

/** A Claude Code-shaped conversation: a long system prompt and tools, then its turns. */
function conversationRequest(topic: string, turns: number, extra: Record<string, unknown> = {}) {
  const messages: Array<{ role: string; content: string }> = [{ role: 'user', content: `Tell me about ${topic}.` }];
  for (let turn = 1; turn < turns; turn += 1)
    messages.push(
      { role: 'assistant', content: `Here is part ${turn} about ${topic}.` },
      { role: 'user', content: `And then, part ${turn + 1}?` },
    );
  return {
    model: 'pool',
    max_tokens: 100,
    system: `You are a careful assistant. ${'Follow the house rules. '.repeat(200)}`,
    tools: [{ name: 'read_file', description: 'Reads a file.', input_schema: { type: 'object' } }],
    messages,
    ...extra,
  };
}

function poolModel(engines: readonly FakeOpenAiEngine[], fallback: Record<string, unknown> = {}) {
  return [
    {
      id: 'pool',
      tier: 'mid',
      generation: 'newer',
      contextWindow: 32768,
      maxOutputTokens: 2048,
      balance: 'session',
      backends: engines.map((engine) => ({
        type: 'openai-compatible',
        engine: 'vllm',
        baseURL: engine.baseURL,
        model: engine.model,
      })),
      fallback: { failureThreshold: 1, cooldownMs: 60_000, ...fallback },
    },
  ] as ServiceConfigInput['models'];
}

describe('four engine replicas behind one model, balance "session"', () => {
  let engines: FakeOpenAiEngine[];
  let clock: { now: number };
  let first: RunningService;
  let second: RunningService;
  const logLines: Array<Record<string, unknown>> = [];

  /** Sends the request to `service` and says which engine answered it (its index), checking the reply. */
  async function engineOf(
    service: RunningService,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<number> {
    const before = engines.map((engine) => engine.chatBodies().length);
    const response = await postJson(service, '/v1/messages', body, headers);
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(((await response.json()) as Reply).content[0]?.text, 'Paris is the capital of France.');
    const asked = engines.flatMap((engine, index) => (engine.chatBodies().length > before[index]! ? [index] : []));
    assert.equal(asked.length, 1, `one engine generates it, not ${JSON.stringify(asked)}`);
    assert.equal(response.headers.get('mms-backend'), `openai-compatible:vllm#${asked[0]! + 1}`);
    return asked[0]!;
  }

  before(async () => {
    engines = await Promise.all(Array.from({ length: 4 }, () => FakeOpenAiEngine.start('vllm')));
    clock = { now: 1_000_000 };
    const options = { registry: { now: () => clock.now } };
    first = await startService({ models: poolModel(engines) }, process.cwd(), {
      ...options,
      log: { level: 'info', destination: { write: (text: string) => void logLines.push(JSON.parse(text)) } },
    });
    second = await startService({ models: poolModel(engines) }, process.cwd(), options);
  });
  after(async () => {
    await first.close();
    await second.close();
    await Promise.all(engines.map((engine) => engine.close()));
  });

  test('a conversation keeps its replica turn after turn, by its session header, its user id or its prefix', async () => {
    const keyed: Array<[string, (turns: number) => Record<string, unknown>, Record<string, string>]> = [
      ['session header', (turns) => conversationRequest('harbours', turns), { [SESSION_HEADER]: 'session-harbours' }],
      ['user id', (turns) => conversationRequest('bridges', turns, { metadata: { user_id: 'user-bridges' } }), {}],
      ['prefix', (turns) => conversationRequest('lighthouses', turns), {}],
    ];
    for (const [how, request, headers] of keyed) {
      const home = await engineOf(first, request(1), headers);
      for (let turns = 2; turns <= 6; turns += 1)
        assert.equal(await engineOf(first, request(turns), headers), home, `${how}, turn ${turns}`);
    }
  });

  test('two replicas of mms with the same config send each conversation to the same engine', async () => {
    const homes = new Set<number>();
    for (let conversation = 0; conversation < 10; conversation += 1) {
      const headers = { [SESSION_HEADER]: `shared-${conversation}` };
      const home = await engineOf(first, conversationRequest(`topic ${conversation}`, 1), headers);
      for (let turns = 2; turns <= 4; turns += 1) {
        const service = turns % 2 === 0 ? second : first;
        assert.equal(await engineOf(service, conversationRequest(`topic ${conversation}`, turns), headers), home);
      }
      homes.add(home);
    }
    assert.ok(homes.size >= 3, `10 conversations on engines ${[...homes].join(', ')}`);
  });

  test('the access log names the replica that answered', async () => {
    const headers = { [SESSION_HEADER]: 'logged' };
    const home = await engineOf(first, conversationRequest('logs', 1), headers);
    const line = logLines.findLast((entry) => entry.msg === 'request' && entry.route === '/v1/messages');
    assert.equal(line?.backend, `openai-compatible:vllm#${home + 1}`);
  });

  test('a replica killed mid-run: its conversations move with no client error, the others stay', async () => {
    const conversations = Array.from({ length: 12 }, (_, index) => ({ [SESSION_HEADER]: `run-${index}` }));
    const homes: number[] = [];
    for (const headers of conversations) homes.push(await engineOf(first, conversationRequest('a run', 1), headers));
    // The replica holding the most of these conversations dies.
    const counts = [0, 1, 2, 3].map((engine) => homes.filter((home) => home === engine).length);
    const dead = counts.indexOf(Math.max(...counts));
    await engines[dead]!.close();
    const movedTo = new Map<number, number>();
    for (const [index, headers] of conversations.entries()) {
      const now = await engineOf(first, conversationRequest('a run', 2), headers);
      if (homes[index] !== dead) assert.equal(now, homes[index], `conversation ${index} stays`);
      else {
        assert.notEqual(now, dead);
        movedTo.set(index, now);
      }
    }
    // A stream of a moved conversation: no error event before (or after) its first output.
    const [movedIndex, movedHome] = [...movedTo][0]!;
    const streamed = await postStreamWithTrailers(
      first,
      { ...conversationRequest('a run', 3), stream: true },
      conversations[movedIndex]!,
    );
    const names = streamed.events.map((event) => event.event);
    assert.ok(!names.includes('error'), names.join(' '));
    assert.equal(names.at(-1), 'message_stop');
    assert.equal(streamed.trailers['mms-backend'], `openai-compatible:vllm#${movedHome + 1}`);
    // Moved conversations stay where they moved, turn after turn.
    for (const [index, to] of movedTo)
      assert.equal(await engineOf(first, conversationRequest('a run', 4), conversations[index]!), to);

    // Back up: after its circuit's cool-down the next request probes it, and its conversations return.
    await engines[dead]!.restart();
    clock.now += 60_000;
    for (const [index] of movedTo)
      assert.equal(await engineOf(first, conversationRequest('a run', 5), conversations[index]!), dead);
  });

  test('a replica cut off after its first output: the stream stays on it and ends in an error, no other replica asked', async () => {
    const headers = { [SESSION_HEADER]: 'cut-after-output' };
    const home = await engineOf(first, conversationRequest('cut streams', 1), headers);
    // The role chunk and "Paris is", then the connection ends: no finish, no [DONE].
    engines[home]!.reply({ stream: loadEngineFixture('vllm', 'text').stream!.slice(0, 2), done: false });
    const before = engines.map((engine) => engine.chatBodies().length);
    const streamed = await postStreamWithTrailers(
      first,
      { ...conversationRequest('cut streams', 2), stream: true },
      headers,
    );
    const names = streamed.events.map((event) => event.event).filter((name) => name !== 'ping');
    assert.ok(names.includes('content_block_delta'), names.join(' '));
    assert.equal(names.at(-1), 'error', names.join(' '));
    assert.equal(streamed.trailers['mms-backend'], `openai-compatible:vllm#${home + 1}`);
    const asked = engines.flatMap((engine, index) => (engine.chatBodies().length > before[index]! ? [index] : []));
    assert.deepEqual(asked, [home], 'sending it again elsewhere would repeat output the client already has');
  });

  test('a probe finds a replica down before a request pays for it, and up again before its cool-down ends', async () => {
    const events: Array<Record<string, unknown>> = [];
    const service = await startService({ models: poolModel(engines, { cooldownMs: 3_600_000 }) }, process.cwd(), {
      registry: { now: () => clock.now },
      log: {
        level: 'info',
        destination: { write: (text: string) => void events.push(JSON.parse(text)) },
      },
    });
    const eventsOf = (type: string) => events.filter((entry) => entry.event === type);
    try {
      // `mms serve` prepares every model, which starts the probes; their interval never comes
      // round in the test: GET /ready asks the same probes, on the test's clock.
      await service.registry.prepare({ progress: false });
      const replica = (engine: number) => `openai-compatible:vllm#${engine + 1}`;
      const readyBackends = async () =>
        ((await (await fetch(`${service.baseURL}/ready`)).json()) as { models: Array<{ backends: unknown[] }> })
          .models[0]!.backends;

      // Killed, then tried by a request: its circuit opens (one failure, a one-hour cool-down).
      const first = { [SESSION_HEADER]: 'probed-first' };
      const home = await engineOf(service, conversationRequest('probes', 1), first);
      await engines[home]!.close();
      assert.notEqual(await engineOf(service, conversationRequest('probes', 2), first), home);
      assert.deepEqual(
        eventsOf('fallback').map((entry) => entry.backend),
        [replica(home)],
      );
      clock.now += 10_000;
      assert.deepEqual((await readyBackends())[home], {
        backend: replica(home),
        ready: false,
        state: 'unreachable',
        circuit: 'open',
        inFlight: 0,
      });
      // Back: the probe that finds it up ends the cool-down, and the next request takes it back.
      await engines[home]!.restart();
      clock.now += 10_000;
      await readyBackends();
      assert.deepEqual(
        eventsOf('health').map((entry) => [entry.backend, entry.up]),
        [
          [replica(home), false],
          [replica(home), true],
        ],
      );
      assert.equal(await engineOf(service, conversationRequest('probes', 3), first), home, 'back once probed up');

      // Killed and found down by a probe before any request: passed over, never tried.
      const second = { [SESSION_HEADER]: 'probed-second' };
      const otherHome = await engineOf(service, conversationRequest('probes again', 1), second);
      await engines[otherHome]!.close();
      clock.now += 10_000;
      await readyBackends();
      const failedBefore = eventsOf('fallback').length;
      assert.notEqual(await engineOf(service, conversationRequest('probes again', 2), second), otherHome);
      assert.equal(eventsOf('fallback').length, failedBefore, 'the dead replica was passed over, not tried');
      await engines[otherHome]!.restart();
    } finally {
      await service.close();
    }
  });
});

describe('config of a balanced list', () => {
  const engine = { type: 'openai-compatible', engine: 'vllm', baseURL: 'http://127.0.0.1:9/v1', model: 'm' };
  const model = (fields: Record<string, unknown>) =>
    [{ id: 'pool', tier: 'mid', generation: 'newer', contextWindow: 4096, maxOutputTokens: 1024, ...fields }] as never;
  const refused = (fields: Record<string, unknown>, message: RegExp) =>
    assert.throws(
      () => validateConfig({ models: model(fields) }, 'test config'),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        return true;
      },
    );

  test('mistakes name their field', () => {
    refused({ backend: engine, balance: 'session' }, /models\.0\.balance: applies only to a model with backends/);
    refused(
      { backends: [engine, engine], balance: 'least-busy', loadEpsilon: 0.5 },
      /models\.0\.loadEpsilon: applies only to balance "session" \(this model's is least-busy\)/,
    );
    refused({ backends: [engine, engine], loadEpsilon: 0.5 }, /models\.0\.loadEpsilon: .*failover, the default/);
    refused({ backends: [engine, engine], balance: 'sticky' }, /models\.0\.balance: .*"session"/);
    refused({ backends: [engine, engine], balance: 'session', loadEpsilon: 0 }, /models\.0\.loadEpsilon/);
  });

  test('in a balanced list every replica has others to move to: each gets the 30 s first-byte limit', () => {
    const config = validateConfig({ models: model({ backends: [engine, engine], balance: 'round-robin' }) }, 'test');
    assert.deepEqual(
      config.models[0]!.backends!.map((backend) => ('firstByteTimeoutMs' in backend ? backend.firstByteTimeoutMs : 0)),
      [30_000, 30_000],
    );
    const failover = validateConfig({ models: model({ backends: [engine, engine] }) }, 'test');
    assert.deepEqual(
      failover.models[0]!.backends!.map((backend) =>
        'firstByteTimeoutMs' in backend ? backend.firstByteTimeoutMs : 0,
      ),
      [30_000, 120_000],
    );
  });
});
