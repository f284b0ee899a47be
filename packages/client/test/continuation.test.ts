import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContentBlock, MessageRequest, ToolParam } from '@model-messages/protocol';
import { fetchContentTokens } from '../src/budgets.js';
import { resolveModel } from '../src/client-options.js';
import { promptChars } from '../src/pre-send-checks.js';
import { continuation, usesSpent, withFetchShare } from '../src/research/continuation.js';
import { buildResearchRequest } from '../src/research/research-request.js';

const model = resolveModel('large', { id: 'large', contextWindow: 200_000, maxOutputTokens: 128_000 });
const budget = { model, bufferTokens: 5_000 };
const original: MessageRequest = buildResearchRequest({
  model,
  question: 'Who founded Acme?',
  context: undefined,
  instructions: undefined,
  maxTokens: 20_000,
  webSearchMaxUses: 5,
  webFetchMaxUses: 5,
  bufferTokens: 5_000,
  thinkingDisabled: new Set(),
});
const firstShare = (original.tools?.find((tool) => tool.name === 'web_fetch') as { max_content_tokens: number })
  .max_content_tokens;

const search = (id: string): ContentBlock[] => [
  {
    type: 'server_tool_use',
    id,
    name: 'web_search',
    input: { query: 'Acme' },
    caller: { type: 'direct' },
  } as ContentBlock,
  {
    type: 'web_search_tool_result',
    tool_use_id: id,
    content: [
      {
        type: 'web_search_result',
        url: `https://acme.example/${id}`,
        title: 'Acme',
        encrypted_content: 'e',
        page_age: null,
      },
    ],
    caller: { type: 'direct' },
  } as ContentBlock,
];
const fetched = (id: string, characters: number): ContentBlock[] => [
  {
    type: 'server_tool_use',
    id,
    name: 'web_fetch',
    input: { url: `https://acme.example/${id}` },
    caller: { type: 'direct' },
  } as ContentBlock,
  {
    type: 'web_fetch_tool_result',
    tool_use_id: id,
    content: {
      type: 'web_fetch_result',
      url: `https://acme.example/${id}`,
      content: {
        type: 'document',
        source: { type: 'text', media_type: 'text/plain', data: 'x'.repeat(characters) },
        title: null,
      },
      retrieved_at: null,
    },
    caller: { type: 'direct' },
  } as ContentBlock,
];
const tool = (request: MessageRequest, name: string) =>
  request.tools?.find((candidate) => candidate.name === name) as
    (ToolParam & { max_uses?: number; max_content_tokens?: number }) | undefined;

test('a continuation offers the uses the turn has left, not a fresh max_uses', () => {
  const turn = [...search('s1'), ...search('s2'), ...fetched('f1', 100)];
  const next = continuation(original, turn, 20_000, usesSpent(turn, []), budget);
  assert.ok(next.ok);
  assert.equal(tool(next.request, 'web_search')?.max_uses, 3);
  assert.equal(tool(next.request, 'web_fetch')?.max_uses, 4);
  assert.deepEqual(next.request.messages.at(-1), { role: 'assistant', content: turn });
});

test('the fetch share is the headroom after the resumed prompt over the fetches left: fetched content never exceeds the headroom', () => {
  // Two fetches took their whole share: the three left share what remains, about one share each.
  const turn = [...fetched('f1', firstShare * 4), ...fetched('f2', firstShare * 4)];
  const next = continuation(original, turn, 20_000, usesSpent(turn, []), budget);
  assert.ok(next.ok);
  const share = tool(next.request, 'web_fetch')!.max_content_tokens!;
  assert.equal(
    share,
    fetchContentTokens({
      contextWindow: 200_000,
      maxOutputTokens: 20_000,
      bufferTokens: 5_000,
      promptChars: promptChars(next.request),
      maxUses: 3,
    }),
  );
  const headroom = 200_000 - 20_000 - 5_000 - Math.ceil(promptChars(original) / 4);
  assert.ok(2 * firstShare + 3 * share <= headroom, `${2 * firstShare} fetched + ${3 * share} more vs ${headroom}`);
});

test('a tool with no uses left, or web fetch with no headroom left, is not offered', () => {
  const spent = { webSearch: 5, webFetch: 1 };
  const crowded = fetched('f1', 4 * (200_000 - 20_000 - 5_000));
  const next = continuation(original, crowded, 20_000, spent, budget);
  assert.ok(next.ok);
  assert.deepEqual(
    next.request.tools?.map((candidate) => candidate.name),
    ['code_execution'],
  );
});

test('uses spent: the calls in the turn or the requests the service reported, whichever is more', () => {
  const usage = {
    input_tokens: 1,
    output_tokens: 1,
    server_tool_use: { web_search_requests: 3, web_fetch_requests: 0 },
  } as Parameters<typeof usesSpent>[1][number];
  assert.deepEqual(usesSpent([...search('s1'), ...fetched('f1', 1)], [usage]), { webSearch: 3, webFetch: 1 });
});

test('a paused turn that does not end on a server tool result cannot be resumed, and says why', () => {
  const turn: ContentBlock[] = [...search('s1'), { type: 'text', text: 'Acme was', citations: null }];
  assert.deepEqual(continuation(original, turn, 20_000, usesSpent(turn, []), budget), {
    ok: false,
    why: 'the paused turn ends on a text block, not a server tool result; sent back it would be a prefill with tools (rule 4)',
  });
});

test('a larger max_tokens (the truncation retry) gets the fetch share recomputed, so prompt + fetches + output + buffer fit the window', () => {
  // The review's numbers: a 200k window, max_tokens 16,000, 5 fetches of 35,757 tokens each.
  const first = buildResearchRequest({
    model,
    question: 'Who founded Acme?',
    context: undefined,
    instructions: undefined,
    maxTokens: 16_000,
    webSearchMaxUses: 5,
    webFetchMaxUses: 5,
    bufferTokens: 5_000,
    thinkingDisabled: new Set(),
  });
  const promptTokens = Math.ceil(promptChars(first) / 4);
  const kept = tool(first, 'web_fetch')!.max_content_tokens!;
  assert.equal(kept, 35_757);
  assert.ok(promptTokens + 5 * kept + 32_000 + 5_000 > 200_000, 'keeping the first share would overflow the window');
  const retry = withFetchShare({ ...first, max_tokens: 32_000 }, budget);
  const share = tool(retry, 'web_fetch')!.max_content_tokens!;
  assert.equal(share, Math.floor((200_000 - promptTokens - 32_000 - 5_000) / 5));
  assert.ok(promptTokens + 5 * share + 32_000 + 5_000 <= 200_000, `${promptTokens} + 5 x ${share} + 32000 + 5000`);
  assert.deepEqual(
    { ...retry, tools: undefined },
    { ...first, max_tokens: 32_000, tools: undefined },
    'nothing else changes',
  );
  assert.deepEqual(
    withFetchShare({ ...first, max_tokens: 200_000 - promptTokens - 5_000 }, budget).tools?.map(
      (candidate) => candidate.name,
    ),
    ['web_search', 'code_execution'],
    'no headroom left: web fetch is not offered',
  );
});
