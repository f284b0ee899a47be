/**
 * The context budget of a turn (context-budget.ts), without HTTP: the input headroom divided
 * across the server calls left, what each result takes out of it (at 4 characters a token, or
 * counted by a backend that counts in process), and code output cut to its share (fitOutput).
 * The budget through the service: test/web-fetch-pages.test.ts, test/llama-cpp-paused-turn-window.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessageRequest, type ContentBlock, type ServerToolResultBlock } from '@model-messages/protocol';
import { ContextBudget, resultCharacters } from '../src/agent/context-budget.js';
import { fitOutput } from '../src/tools/code-execution/code-execution-tool.js';
import { Signer } from '../src/signing/signer.js';
import { admitSearchResults, encodeSearchContent } from '../src/signing/search-content.js';

describe('context budget', () => {
  const SEARCH = { type: 'web_search_20260209', name: 'web_search' };
  const FETCH = { type: 'web_fetch_20260209', name: 'web_fetch' };
  const request = (tools: unknown[]) =>
    parseMessageRequest({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'q' }], tools });
  const page = (data: string): ServerToolResultBlock => ({
    type: 'web_fetch_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: {
      type: 'web_fetch_result',
      url: 'https://a.example/',
      content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data }, title: 'T' },
      retrieved_at: '',
    },
  });
  const code = (stdout: string, stderr = ''): ServerToolResultBlock => ({
    type: 'code_execution_tool_result',
    tool_use_id: 'srvtoolu_2',
    content: { type: 'code_execution_result', stdout, stderr, return_code: 0, content: [] },
  });

  test('the headroom after prompt and max_tokens is divided across the calls left, and results are taken out as they come', () => {
    // (1500 window - 400 prompt - 100 max_tokens) tokens * 4 characters.
    const budget = new ContextBudget(
      request([
        { ...SEARCH, max_uses: 2 },
        { ...FETCH, max_uses: 3 },
      ]),
      400,
      1500,
    );
    assert.equal(budget.remainingCharacters, 4000);
    assert.equal(budget.share('web_fetch', new Map()), 800);
    assert.equal(budget.share('code_execution', new Map()), 666, 'code gets one share, as one more call');
    budget.spend(page('x'.repeat(1000)));
    assert.equal(budget.remainingCharacters, 4000 - (1000 + 'https://a.example/'.length + 1));
    assert.equal(budget.share('web_search', new Map([['web_fetch', 1]])), Math.floor(2981 / 4));
    budget.spend(code('y'.repeat(5000)));
    assert.equal(budget.remainingCharacters, 0, 'never below zero');
    assert.equal(budget.share('web_fetch', new Map([['web_fetch', 1]])), 0);
  });

  test('a tool without max_uses counts as 5 calls; from the fifth on, each call may take what is left', () => {
    const budget = new ContextBudget(request([FETCH]), 0, 1100);
    assert.equal(budget.share('web_fetch', new Map()), 800);
    assert.equal(budget.share('web_fetch', new Map([['web_fetch', 3]])), 2000);
    assert.equal(budget.share('web_fetch', new Map([['web_fetch', 4]])), 4000);
    assert.equal(budget.share('web_fetch', new Map([['web_fetch', 9]])), 4000);
  });

  test('a fetch with max_content_tokens gets its share of what is left like any call (its own cap applies within it)', () => {
    const budget = new ContextBudget(request([SEARCH, { ...FETCH, max_uses: 5, max_content_tokens: 20_000 }]), 0, 1100);
    assert.equal(budget.share('web_fetch', new Map()), 400);
    assert.equal(budget.share('web_search', new Map()), 400);
  });

  test('with max_uses 5 and max_content_tokens 20000, 50k tokens of headroom give every fetch a fifth, not the first ones all', () => {
    const budget = new ContextBudget(request([{ ...FETCH, max_uses: 5, max_content_tokens: 20_000 }]), 0, 50_000 + 100);
    const shares: number[] = [];
    for (let uses = 0; uses < 5; uses += 1) {
      const share = budget.share('web_fetch', new Map([['web_fetch', uses]]));
      shares.push(share);
      // Each page fills its share: the cap (80,000 characters) is larger.
      budget.spend(page('x'.repeat(share - 'https://a.example/'.length - 1)));
    }
    assert.deepEqual(shares, [40_000, 40_000, 40_000, 40_000, 40_000]);
  });

  test('what a result puts in the context: search URL, title, page age and text; code stdout and stderr; an error its JSON', () => {
    const signer = new Signer(Buffer.alloc(32, 1));
    const hit = {
      type: 'web_search_result',
      url: 'https://b.example/x',
      title: 'Otters',
      page_age: '2 days',
      encrypted_content: encodeSearchContent(signer, 'https://b.example/x', 'twelve chars'),
    };
    const forged = { ...hit, encrypted_content: encodeSearchContent(new Signer(Buffer.alloc(32, 2)), hit.url, 'x') };
    admitSearchResults([hit, forged], signer);
    assert.equal(
      resultCharacters({ type: 'web_search_tool_result', tool_use_id: 's', content: [hit, hit] }),
      2 * (19 + 6 + 6 + 12),
    );
    assert.equal(
      resultCharacters({ type: 'web_search_tool_result', tool_use_id: 's', content: [forged] }),
      19 + 6 + 6,
      'text that did not verify is not in the context',
    );
    assert.equal(resultCharacters(code('out', 'error')), 8);
    const error = { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' };
    assert.equal(
      resultCharacters({ type: 'web_fetch_tool_result', tool_use_id: 'f', content: error }),
      JSON.stringify(error).length,
    );
  });

  describe('counted by a backend that counts in process (issue 32)', () => {
    /**
     * A turn counted as a model that reads a character a token would: the prompt's 100 tokens,
     * then each result's characters (an error's, none) and 20 tokens of a template's syntax around it.
     */
    const measure = async (blocks: readonly ContentBlock[]) =>
      100 +
      blocks.reduce((sum, block) => {
        const result = block as ServerToolResultBlock;
        return sum + 20 + (JSON.stringify(result.content).includes('_error') ? 0 : resultCharacters(result));
      }, 0);
    /** A page cut as the fetch tool cuts one: its text to what is left beside its URL and title. */
    const fit = (result: ServerToolResultBlock, characters: number): ServerToolResultBlock => {
      const data = (result.content as { content: { source: { data: string } } }).content.source.data;
      return page(data.slice(0, Math.max(0, characters - 'https://a.example/'.length - 1)));
    };

    test('a result that adds more tokens than its share is cut by its tool until it does not; the share excludes the syntax around it', async () => {
      // (1000 window - 100 prompt - 100 max_tokens) = 800 tokens, 3,200 characters at 4 a token.
      const budget = new ContextBudget(request([{ ...FETCH, max_uses: 2 }]), 100, 1000, measure);
      const share = budget.share('web_fetch', new Map());
      assert.equal(share, 1600);
      const kept = await budget.take(page('x'.repeat(share)), share, fit, { blocks: [], outputTokens: 0 });
      // 400 tokens of share (1,600 characters at 4 a token) and the 20 of syntax.
      assert.ok((await measure([kept])) - 100 <= 420, String(resultCharacters(kept)));
      assert.ok(resultCharacters(kept) > 350, String(resultCharacters(kept)));
      assert.equal(budget.remainingCharacters, (900 - (await measure([kept]))) * 4);
    });

    test('a result that would leave less than the unspent max_tokens free is cut, and replaced when it cannot be', async () => {
      const budget = new ContextBudget(request([{ ...FETCH, max_uses: 1 }]), 100, 1000, measure);
      // 50 of the 100 output tokens spent: the turn may fill the window but for the other 50.
      const turn = { blocks: [], outputTokens: 50 };
      const kept = await budget.take(page('x'.repeat(5000)), 20_000, fit, turn);
      assert.ok((await measure([kept])) <= 950, String(await measure([kept])));
      const uncut = await budget.take(page('x'.repeat(5000)), 20_000, undefined, turn);
      assert.deepEqual(uncut.content, { type: 'web_fetch_tool_result_error', error_code: 'max_uses_exceeded' });
    });
  });

  test('code output over its share is cut, stderr keeping at least half, with a note that says so', () => {
    assert.deepEqual(fitOutput({ stdout: 'short', stderr: '' }, 100), { stdout: 'short', stderr: '' });
    const fitted = fitOutput({ stdout: 'o'.repeat(500), stderr: 'e'.repeat(500) }, 200);
    assert.equal(fitted.stdout.length + fitted.stderr.length, 200);
    assert.match(
      fitted.stderr,
      /^e+\n\[output cut to 200 characters, its share of the context window; it had 1000\]\n$/,
    );
    assert.ok(fitted.stdout.length > 0 && fitted.stdout.length <= fitted.stderr.length);
    assert.deepEqual(fitOutput({ stdout: 'o'.repeat(50), stderr: '' }, 10), { stdout: 'o'.repeat(10), stderr: '' });
  });

  test('stderr that fits keeps every character when stdout is cut; its line break comes out of stdout', () => {
    const fitted = fitOutput({ stdout: 'o'.repeat(300), stderr: 'Error: boom' }, 150);
    assert.match(
      fitted.stderr,
      /^Error: boom\n\[output cut to 150 characters, its share of the context window; it had 311\]\n$/,
    );
    assert.equal(fitted.stdout.length + fitted.stderr.length, 150);
    assert.equal(
      fitOutput({ stdout: 'o'.repeat(300), stderr: 'Error: boom\n' }, 150).stderr.slice(0, 12),
      'Error: boom\n',
    );
  });

  test('stderr that is cut keeps a prefix of its own characters, the last giving way to the line break', () => {
    const stderr = Array.from({ length: 500 }, (_, index) => String.fromCharCode(0x4e00 + index)).join('');
    const fitted = fitOutput({ stdout: 'o'.repeat(500), stderr }, 200);
    const kept = fitted.stderr.slice(0, fitted.stderr.indexOf('\n[output cut'));
    assert.ok(kept.length > 0 && stderr.startsWith(kept), kept);
    assert.equal(fitted.stdout.length + fitted.stderr.length, 200);
  });
});
