/**
 * The real Claude Code CLI, unmodified, at its pinned version, against mms on the scripted
 * backend (the scenarios and the scripted model: packages/testing/src/claude-code-scenarios.ts):
 * no `--model` flag, so it picks its own `claude-...` id, which the config routes by pattern; its
 * max_tokens of 128000 is clamped to the model's limit. A plain prompt is answered; a client tool
 * round trip (its Write tool) ends with the file on disk and the answer shown, the first reply's
 * thinking, shown to it as omitted, sent back and verified; and asked to search the web (issue
 * 34), its WebSearch tool's own request, with the `web_search_20250305` server tool, runs through
 * mms's search provider (a folder index here) and the answer names a result, with no 4xx in the
 * access log. `--model` takes an id the model is listed as. What `maxTokens` refuse and clamp do
 * with it, and CLAUDE_CODE_MAX_OUTPUT_TOKENS, is what docs/compatibility.md says (measured here on
 * 2.1.332: it asks again within a 400's limit from 4,096 up only). Installed once into `.cache/`
 * (packages/testing/src/claude-code-cli.ts); skipped with the reason where it cannot be installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLAUDE_CODE_SCENARIOS,
  claudeCodeCli,
  claudeCodeScript,
  documentsFolder,
  RecordingProxy,
  runClaudeCode,
  SEARCH_URL_BASE,
  startService,
  type ClaudeCodeScenario,
  type RunningService,
} from '@model-messages/testing';

const cli = await claudeCodeCli();
const skip = 'unavailable' in cli ? `the Claude Code CLI is not available: ${cli.unavailable}` : false;

describe('Claude Code CLI against mms', { skip }, () => {
  let service: RunningService;
  let workFolder: string;
  let proxy: RecordingProxy;
  /** The service's access lines: the status of every request. */
  const accessLines: Array<{ status: number; path?: string }> = [];

  before(async () => {
    workFolder = mkdtempSync(join(tmpdir(), 'mms-claude-code-work-'));
    const script = join(mkdtempSync(join(tmpdir(), 'mms-claude-code-script-')), 'script.json');
    writeFileSync(script, JSON.stringify(claudeCodeScript(workFolder)));
    service = await startService(
      {
        models: [
          {
            id: 'house-model',
            aliases: ['claude-*'],
            listAs: ['claude-house-large'],
            tier: 'large',
            generation: 'newer',
            contextWindow: 200_000,
            maxOutputTokens: 32_000,
            maxTokens: 'clamp',
            backend: { type: 'scripted', script },
          },
        ],
        serverTools: {
          webSearch: {
            provider: { type: 'folder', folder: documentsFolder(), urlBase: SEARCH_URL_BASE, watch: false },
          },
        },
      },
      process.cwd(),
      {
        log: {
          level: 'info',
          destination: {
            write(text: string) {
              for (const line of text.split('\n').filter(Boolean)) {
                const value = JSON.parse(line) as { msg?: string; status?: number; path?: string };
                if (value.msg === 'request') accessLines.push({ status: value.status ?? 0, path: value.path });
              }
            },
          },
        },
      },
    );
    proxy = await RecordingProxy.start(service.baseURL);
  });
  after(async () => {
    await proxy?.close();
    await service?.close();
  });

  function claude(scenario: ClaudeCodeScenario, args: string[] = []) {
    return runClaudeCode(cli as { path: string }, {
      prompt: scenario.prompt,
      args: [...scenario.args, ...args],
      cwd: workFolder,
      baseURL: proxy.baseURL,
      apiKey: service.apiKey,
    });
  }

  const scenario = (name: string) => CLAUDE_CODE_SCENARIOS.find((candidate) => candidate.name === name)!;

  test('a plain prompt is answered', async () => {
    const run = await claude(scenario('plain-prompt'));
    assert.equal(run.status, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.equal(scenario('plain-prompt').problem(run, workFolder), undefined, run.stdout);
  });

  test('a Write tool round trip leaves the file on disk and shows the answer', async () => {
    const run = await claude(scenario('write'));
    assert.equal(run.status, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.equal(scenario('write').problem(run, workFolder), undefined, run.stdout);
    // The second request of the round trip sent back the first reply's thinking, shown to the
    // CLI as omitted (empty text, the text kept in the signature), and it verified.
    const messages = proxy.requests.at(-1)!.body!.messages as Array<{ role: string; content: unknown }>;
    const thinking = messages
      .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
      .find((block: { type: string }) => block.type === 'thinking') as { thinking: string; signature: string };
    assert.equal(thinking.thinking, '');
    assert.match(thinking.signature, /^mms1h\./);
  });

  test("asked to search the web, its WebSearch runs through mms's search provider and the answer names a result", async () => {
    const seenBefore = proxy.requests.length;
    const linesBefore = accessLines.length;
    const run = await claude(scenario('web-search'));
    assert.equal(run.status, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.equal(scenario('web-search').problem(run, workFolder), undefined, run.stdout);
    // The CLI's WebSearch sent its own request with the dated server tool, and mms ran it.
    const searches = proxy.requests
      .slice(seenBefore)
      .filter((request) =>
        (request.body?.tools as Array<{ type?: string }> | undefined)?.some(
          (tool) => tool.type === 'web_search_20250305',
        ),
      );
    assert.equal(searches.length, 1);
    assert.equal(searches[0]!.status, 200);
    // The conversation's two requests and WebSearch's own, each a 200 in the access log.
    const lines = accessLines.slice(linesBefore);
    assert.equal(lines.length, 3, JSON.stringify(lines));
    assert.deepEqual(
      lines.filter((line) => line.status >= 400),
      [],
    );
  });

  test('--model takes an id the model is listed as', async () => {
    const run = await claude(scenario('plain-prompt'), ['--model', 'claude-house-large']);
    assert.equal(run.status, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.equal(proxy.requests.at(-1)!.body!.model, 'claude-house-large');
  });

  test('every request of every run was answered without a 4xx or 5xx', () => {
    assert.deepEqual(
      proxy.requests.filter((request) => request.status >= 400).map((request) => `${request.url}: ${request.status}`),
      [],
    );
  });
});

describe('Claude Code CLI and maxTokens, as docs/compatibility.md says', { skip }, () => {
  /** One `claude -p` against a model of this output limit: the max_tokens and status of each request. */
  async function ask(maxOutputTokens: number, maxTokens: 'refuse' | 'clamp', env: Record<string, string> = {}) {
    const service = await startService({
      models: [
        {
          id: 'house-model',
          aliases: ['claude-*'],
          tier: 'large',
          generation: 'newer',
          contextWindow: 200_000,
          maxOutputTokens,
          maxTokens,
          backend: { type: 'scripted' },
        },
      ],
    });
    const proxy = await RecordingProxy.start(service.baseURL);
    try {
      const run = await runClaudeCode(cli as { path: string }, {
        prompt: 'Say hello',
        cwd: mkdtempSync(join(tmpdir(), 'mms-claude-code-max-')),
        baseURL: proxy.baseURL,
        apiKey: service.apiKey,
        env,
      });
      const requests = proxy.requests
        .filter((request) => request.url.startsWith('/v1/messages'))
        .map((request) => `${request.status} ${String(request.body?.max_tokens)}`);
      return { run, requests };
    } finally {
      await proxy.close();
      await service.close();
    }
  }

  test('refuse: from a limit of 4,096 it reads the 400 and asks again within it; below, it fails after six', async () => {
    const within = await ask(4_096, 'refuse');
    assert.equal(within.run.status, 0, within.run.stdout);
    assert.deepEqual(within.requests, ['400 128000', '200 4096']);
    const below = await ask(4_095, 'refuse');
    assert.equal(below.run.status, 1);
    assert.deepEqual(
      below.requests,
      Array.from({ length: 6 }, () => '400 128000'),
    );
    assert.match(below.run.stdout, /max_tokens: 128000 > 4095, which is the maximum allowed/);
  });

  test('clamp: no 400, but a reply cut at the lowered limit reads to it as cut at 128000', async () => {
    const { run, requests } = await ask(5, 'clamp');
    assert.ok(requests.length > 0 && requests.every((request) => request === '200 128000'), requests.join(', '));
    assert.match(run.stdout, /exceeded the 128000 output token maximum/);
  });

  test("CLAUDE_CODE_MAX_OUTPUT_TOKENS at the model's limit: asked exactly that, no 400, a cut told with its number", async () => {
    const plain = await ask(3_000, 'refuse', { CLAUDE_CODE_MAX_OUTPUT_TOKENS: '3000' });
    assert.equal(plain.run.status, 0, plain.run.stdout);
    assert.deepEqual(plain.requests, ['200 3000']);
    const cut = await ask(5, 'refuse', { CLAUDE_CODE_MAX_OUTPUT_TOKENS: '5' });
    assert.ok(cut.requests.length > 0 && cut.requests.every((request) => request === '200 5'), cut.requests.join(', '));
    assert.match(cut.run.stdout, /exceeded the 5 output token maximum/);
  });
});
