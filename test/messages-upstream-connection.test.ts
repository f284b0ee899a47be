/**
 * The messages-upstream backend's connection to the upstream: a client that leaves closes it
 * (and frees the upstream's slot), an upstream that lingers after message_stop does not hold
 * it back, and the start-up check of reachability, model and key.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  answerCount,
  closedPortURL,
  modelsWithBackend,
  postJson,
  rawUpstream,
  readStreamUntil,
  scriptedModels,
  sseFrames,
  startService,
  streamOpening,
  type RunningService,
} from '@model-messages/testing';
import { hello, startUpstreamPair, type UpstreamPair } from './messages-upstream-support.js';

let pair: UpstreamPair;
let upstream: RunningService;
before(async () => {
  pair = await startUpstreamPair();
  upstream = pair.upstream;
});
after(() => pair.close());

describe('cancellation', () => {
  // The time limits only keep a broken build from hanging the run: they time nothing.
  test('a client that leaves mid-stream closes the upstream connection', { timeout: 20_000 }, async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      upstreamClosed = resolve;
    });
    const endless = await rawUpstream((request, response) => {
      if (answerCount(request, response)) return;
      // The upstream never ends this stream by itself: only a closed connection stops it.
      response.on('close', () => upstreamClosed());
      response.writeHead(200, { 'content-type': 'text/event-stream' }).write(sseFrames(streamOpening('Endless')));
    });
    const relay = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: endless.baseURL }),
    });
    try {
      const response = await postJson(relay, '/v1/messages', { ...hello, stream: true });
      const reader = response.body!.getReader();
      // Our stream opens before the upstream is asked: its first content says the upstream answered.
      await readStreamUntil(reader, /Endless/);
      await reader.cancel();
      await closed;
    } finally {
      await relay.close();
      await endless.close();
    }
  });

  test(
    'a front mms in front of an mms: the upstream frees its slot when the client leaves',
    { timeout: 20_000 },
    async () => {
      const slow = await startService({ models: scriptedModels({ tokenDelayMs: 20 }) });
      const relay = await startService({
        models: modelsWithBackend({ type: 'messages-upstream', baseURL: slow.baseURL, apiKey: slow.apiKey }),
      });
      try {
        const long = {
          ...hello,
          max_tokens: 2000,
          messages: [{ role: 'user', content: 'word '.repeat(1500) }],
          stream: true,
        };
        const response = await postJson(relay, '/v1/messages', long);
        const reader = response.body!.getReader();
        await readStreamUntil(reader, /content_block_delta/);
        const admission = slow.registry.resolve('mid').admission;
        assert.equal(admission.stats.active, 1);
        await reader.cancel();
        // 1500 tokens at 20 ms would hold the slot for 30 s; a closed connection frees it at once.
        while (admission.stats.active > 0) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(admission.stats.active, 0);
      } finally {
        await relay.close();
        await slow.close();
      }
    },
  );
});

describe('the end of the response', () => {
  test('an upstream that lingers after message_stop does not hold it back: the client has it first, and the response is still read to its end', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let ended!: (cleanly: boolean) => void;
    const closed = new Promise<boolean>((resolve) => (ended = resolve));
    let upstreamClosed = false;
    const stop = [
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
      { type: 'message_stop' },
    ];
    const lingering = await rawUpstream((request, response) => {
      if (answerCount(request, response)) return;
      response.on('close', () => {
        upstreamClosed = true;
        ended(response.writableFinished);
      });
      response
        .writeHead(200, { 'content-type': 'text/event-stream' })
        .write(sseFrames([...streamOpening('Done.'), ...stop]));
      void held.then(() => response.end());
    });
    const relay = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: lingering.baseURL }),
    });
    try {
      const response = await postJson(relay, '/v1/messages', { ...hello, stream: true });
      const text = await response.text();
      assert.match(text, /event: message_stop/);
      assert.equal(upstreamClosed, false, "message_stop arrived while the upstream's response was still open");
      release();
      assert.equal(await closed, true, 'the upstream ended its response itself: not hung up on');
    } finally {
      release();
      await relay.close();
      await lingering.close();
    }
  });
});

describe('start-up check', () => {
  test('prepare reports a reachable upstream and its model, and does not stop the start for one that is down', async () => {
    const up = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: upstream.baseURL, apiKey: upstream.apiKey }),
    });
    const down = await startService({
      models: modelsWithBackend({ type: 'messages-upstream', baseURL: await closedPortURL() }),
    });
    const unknown = await startService({
      models: modelsWithBackend({
        type: 'messages-upstream',
        baseURL: upstream.baseURL,
        apiKey: upstream.apiKey,
        model: 'no-such-model',
      }),
    });
    try {
      const [reachable] = await up.registry.prepare({ progress: false });
      assert.equal(reachable?.prepared, `upstream ${upstream.baseURL}, model small-older`);
      const [unreachable] = await down.registry.prepare({ progress: false });
      assert.match(
        unreachable?.prepared ?? '',
        /not reachable now \(connection refused \(ECONNREFUSED\)\); every request tries it again/,
      );
      const [missing] = await unknown.registry.prepare({ progress: false });
      assert.match(missing?.prepared ?? '', /does not list the model no-such-model/);
    } finally {
      await up.close();
      await down.close();
      await unknown.close();
    }
  });

  test('what cannot fix itself stops the start: a refused key, an unset key variable', async () => {
    const refused = await startService({
      models: modelsWithBackend({
        type: 'messages-upstream',
        baseURL: upstream.baseURL,
        apiKey: 'not-the-upstream-key',
      }),
    });
    const unset = await startService({
      models: modelsWithBackend({
        type: 'messages-upstream',
        baseURL: upstream.baseURL,
        apiKeyEnv: 'MMS_TEST_UNSET_UPSTREAM_KEY',
      }),
    });
    try {
      await assert.rejects(refused.registry.prepare({ progress: false }), /refused this service's API key \(401\)/);
      await assert.rejects(
        unset.registry.prepare({ progress: false }),
        /MMS_TEST_UNSET_UPSTREAM_KEY \(backend.apiKeyEnv\) is not set/,
      );
    } finally {
      await refused.close();
      await unset.close();
    }
  });
});
