/**
 * Tool-call reliability (issue 35; docs/benchmarks.md, "Tool calls: recovered, repaired, valid").
 * Not a timed test: it counts how often a call the model makes reaches the client as the right
 * tool_use block.
 *
 *   node --import tsx bench/tool-calls.ts [--requests 200] [--no-peer] [--no-embedded]
 *
 * (a) every recorded engine reply (packages/testing/fixtures/tool-call-replies: each leaked
 *     syntax, empty, unparseable, truncated, missing-required, run-together, odd chunking, a
 *     failed repair, and replies that must stay text) through mms and the fake OpenAI engine of
 *     its kind, in 7 modes (folded, streamed, streamed in pieces of 1, 2, 3, 5, 7 characters);
 * (b) Claude Code's recorded tool set offered to the embedded engine, `--requests` per row:
 *     random weights under tool_choice auto and any, scripted weights that open a call and
 *     babble under auto; the share of inputs valid against their tool's whole schema
 *     (bench/tool-calls/embedded-engine.ts);
 * (c) the same recorded replies through a peer, @musistudio/claude-code-router 2.0.0 (installed
 *     into bench/gateway/peers on first use, as bench/gateway.ts does), side by side with (a).
 *     LiteLLM, the other peer the issue names, is a PyPI package: see docs/benchmarks.md for why
 *     it is not in the table.
 */
import { parseArgs } from 'node:util';
import { FakeOpenAiEngine, startService, type FakeEngineKind } from '@model-messages/testing';
import { positiveInteger } from './command-arguments.js';
import { ensurePeersInstalled, startClaudeCodeRouter } from './gateway/peers.js';
import { measureEmbedded, type EmbeddedResult } from './tool-calls/embedded-engine.js';
import { MODES, replayAll, type CaseResult, type Gateway } from './tool-calls/recorded-replies.js';

const KINDS: readonly FakeEngineKind[] = ['vllm', 'sglang', 'llama.cpp', 'ollama', 'generic'];

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    'no-peer': { type: 'boolean', default: false },
    'no-embedded': { type: 'boolean', default: false },
  },
});
const requests = positiveInteger(values.requests, 'requests');

async function mmsGateway<T>(use: (gateway: Gateway) => Promise<T>): Promise<T> {
  const engines = {} as Record<FakeEngineKind, FakeOpenAiEngine>;
  for (const kind of KINDS) engines[kind] = await FakeOpenAiEngine.start(kind);
  const service = await startService({
    models: KINDS.map((kind) => engines[kind].modelConfig(kind)),
  });
  try {
    return await use({
      name: 'mms',
      repairs: true,
      // mms always streams from the engine.
      foldsUpstream: false,
      engineFor: (reply) => engines[reply.engine],
      post: (reply, body) =>
        fetch(`${service.baseURL}/v1/messages`, {
          method: 'POST',
          headers: { ...service.headers, 'content-type': 'application/json' },
          body: JSON.stringify({ model: reply.engine, ...body }),
        }),
    });
  } finally {
    await service.close();
    for (const kind of KINDS) await engines[kind].close();
  }
}

/** The peer: one router in front of one fake engine, which replays each case in its engine's chunk shape. */
async function routerGateway<T>(use: (gateway: Gateway) => Promise<T>): Promise<T> {
  const engine = await FakeOpenAiEngine.start('vllm');
  const router = await startClaudeCodeRouter(engine.baseURL, engine.model);
  try {
    return await use({
      name: 'claude-code-router',
      repairs: false,
      foldsUpstream: true,
      engineFor: () => engine,
      post: (_reply, body) =>
        fetch(`http://127.0.0.1:${router.port}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'bench', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ model: engine.model, ...body }),
        }),
    });
  } finally {
    await router.stop();
    await engine.close();
  }
}

function replayTable(columns: Array<{ name: string; results: CaseResult[] }>): string {
  const cases = columns[0]!.results.map((result) => result.reply);
  const lines = [
    `| case | engine | what | ${columns.map((column) => column.name).join(' | ')} |`,
    `| --- | --- | --- | ${columns.map(() => '---:').join(' | ')} |`,
  ];
  cases.forEach((reply, at) => {
    const cells = columns.map((column) => `${column.results[at]!.right}/${MODES.length}`);
    lines.push(
      `| ${reply.name} | ${reply.engine} | ${reply.failure}${reply.syntax ? ` (${reply.syntax})` : ''} | ${cells.join(' | ')} |`,
    );
  });
  const totals = columns.map((column) => {
    const right = column.results.reduce((sum, result) => sum + result.right, 0);
    const all = column.results.length * MODES.length;
    return `**${right}/${all} (${((100 * right) / all).toFixed(1)} %)**`;
  });
  lines.push(`| all | | | ${totals.join(' | ')} |`);
  return lines.join('\n');
}

function embeddedTable(results: readonly EmbeddedResult[]): string {
  const lines = [
    '| weights | requests | errors | tool_use blocks checked | schema-valid | cut by max_tokens |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const result of results) {
    const share = result.calls === 0 ? 'n/a' : `${((100 * result.valid) / result.calls).toFixed(1)} %`;
    lines.push(
      `| ${result.weights} | ${result.requests} | ${result.errors} | ${result.calls} | ${result.valid} (${share}) | ${result.cut} |`,
    );
  }
  return lines.join('\n');
}

const columns: Array<{ name: string; results: CaseResult[] }> = [];
console.log('(a) recorded replies through mms');
columns.push({ name: 'mms', results: await mmsGateway(replayAll) });
if (!values['no-peer']) {
  console.log(`(c) the same through a peer: ${ensurePeersInstalled().join(', ')}`);
  columns.push({ name: 'claude-code-router 2.0.0', results: await routerGateway(replayAll) });
}
console.log(`\nRight replies per case, of ${MODES.length} modes (${MODES.join(', ')}):\n`);
console.log(replayTable(columns));
for (const column of columns)
  for (const result of column.results)
    if (result.firstWrong)
      console.log(
        `  ${column.name} ${result.reply.name}, ${result.firstWrong.mode}: ${JSON.stringify(result.firstWrong.outcome).slice(0, 300)}`,
      );
if (!values['no-embedded']) {
  console.log(`\n(b) Claude Code's tools on the embedded engine, ${requests} requests per row`);
  const results = await measureEmbedded(requests, (line) => console.log(line));
  console.log(`\n${embeddedTable(results)}`);
  for (const result of results)
    for (const line of result.invalid) console.log(`  invalid (${result.weights}): ${line}`);
}
