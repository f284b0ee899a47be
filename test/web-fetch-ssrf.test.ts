/**
 * The web fetch SSRF guard through the service: loopback refused by default, a battery of private
 * and disguised addresses that must all be refused, DNS rebinding caught at connect. The address
 * policy itself is tested without HTTP in packages/server/test/address-policy.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningService } from '@model-messages/testing';
import { fetchVia, results, SSRF_TARGETS, startFetchBench, type FetchBench } from './web-fetch-support.js';

let bench: FetchBench;
let origin: string;
/** The default networks: loopback refused. */
let guarded: RunningService;
/** DNS rebinding: `rebind.test` resolves to 127.0.0.1 (allowed) first and to 127.0.0.2 (not) after. */
let rebinding: RunningService;
let rebindOrigin: string;
before(async () => {
  bench = await startFetchBench();
  ({ origin, guarded, rebinding, rebindOrigin } = bench);
});
after(() => bench.close());

describe('SSRF guard', () => {
  test('loopback is refused without an explicit allow-list', async () => {
    const [result] = results((await fetchVia(guarded, `fetch ${origin}/notes.txt`)).content);
    assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
  });

  for (const target of SSRF_TARGETS) {
    test(`${target} is refused`, async () => {
      const [result] = results((await fetchVia(guarded, `ssrf ${target}`)).content);
      assert.deepEqual(result, { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
    });
  }

  test('DNS rebinding: a name that resolved to an allowed address is checked again on the next connect, and refused', async () => {
    const reply = await fetchVia(rebinding, `rebind ${rebindOrigin}/page`);
    const [first, second] = results(reply.content);
    assert.equal(first?.content?.source.data, 'from the allowed address');
    assert.deepEqual(second, { type: 'web_fetch_tool_result_error', error_code: 'url_not_allowed' });
    assert.deepEqual(bench.rebindLookups, ['rebind.test', 'rebind.test'], 'each connection resolved the name');
    assert.deepEqual(bench.privateHostRequests, []);
  });
});
