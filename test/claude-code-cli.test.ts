/**
 * The real Claude Code CLI, unmodified, against mms on the scripted backend: no `--model` flag,
 * so it picks its own `claude-...` id, which the config routes by pattern; its max_tokens of
 * 128000 is clamped to the model's limit. A plain prompt is answered, and a client tool round
 * trip (its Write tool) ends with the file on disk and the answer shown. Its second request
 * sends back the thinking of the first, shown to it as omitted (`display: "omitted"`), which
 * must verify. Installed once into `.cache/` (packages/testing/src/claude-code-cli.ts); skipped
 * with the reason where it cannot be installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeCodeCli, startService, type RunningService } from '@model-messages/testing';

const cli = await claudeCodeCli();
const skip = 'unavailable' in cli ? `the Claude Code CLI is not available: ${cli.unavailable}` : false;

describe('Claude Code CLI against mms', { skip }, () => {
  let service: RunningService;
  let workFolder: string;
  let proxy: Server;
  /** What the CLI sent, through a logging proxy in front of mms: method, URL, status, body. */
  const seen: Array<{ url: string; status: number; body: Record<string, unknown> }> = [];
  before(async () => {
    workFolder = mkdtempSync(join(tmpdir(), 'mms-claude-code-work-'));
    const script = join(mkdtempSync(join(tmpdir(), 'mms-claude-code-script-')), 'script.json');
    writeFileSync(
      script,
      JSON.stringify([
        {
          when: 'hello\\.txt',
          steps: [
            [
              { type: 'thinking', thinking: 'The user wants one file written.' },
              { type: 'text', text: 'Writing the file.' },
              {
                type: 'tool_use',
                name: 'Write',
                input: { file_path: join(workFolder, 'hello.txt'), content: 'hi there\n' },
              },
            ],
            [{ type: 'text', text: 'Wrote hello.txt.' }],
          ],
        },
      ]),
    );
    service = await startService({
      models: [
        {
          id: 'house-model',
          aliases: ['claude-*'],
          tier: 'large',
          generation: 'newer',
          contextWindow: 200_000,
          maxOutputTokens: 32_000,
          maxTokens: 'clamp',
          backend: { type: 'scripted', script },
        },
      ],
    });
  });
  before(async () => {
    proxy = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const target = new URL(incoming.url ?? '/', service.baseURL);
        const forwarded = httpRequest(target, { method: incoming.method, headers: incoming.headers }, (answer) => {
          seen.push({ url: incoming.url ?? '', status: answer.statusCode ?? 0, body: text ? JSON.parse(text) : {} });
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        });
        forwarded.end(text);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    proxy?.close();
    await service?.close();
  });

  /** `claude -p PROMPT` as a user runs it offline: a fresh home, stdin closed, edits accepted. */
  async function claude(prompt: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
    const child = spawn((cli as { path: string }).path, ['-p', prompt, '--permission-mode', 'acceptEdits'], {
      cwd: workFolder,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
      env: {
        PATH: process.env.PATH,
        HOME: mkdtempSync(join(tmpdir(), 'mms-claude-code-home-')),
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        ANTHROPIC_API_KEY: service.apiKey,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const [status] = (await once(child, 'close')) as [number | null];
    return { status, stdout, stderr };
  }

  test('a plain prompt is answered', async () => {
    const run = await claude('Say hello');
    assert.equal(run.status, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    // The scripted model's default answer echoes the last user text.
    assert.match(run.stdout, /Say hello/);
  });

  test('a Write tool round trip leaves the file on disk and shows the answer', async () => {
    const run = await claude("Create the file hello.txt containing 'hi there'");
    assert.equal(run.status, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.equal(readFileSync(join(workFolder, 'hello.txt'), 'utf8'), 'hi there\n');
    assert.match(run.stdout, /Wrote hello\.txt\./);
    // The second request of the round trip sent back the first reply's thinking, shown to the
    // CLI as omitted (empty text, the text kept in the signature), and it verified.
    const messages = seen.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    const thinking = messages
      .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
      .find((block: { type: string }) => block.type === 'thinking') as { thinking: string; signature: string };
    assert.equal(thinking.thinking, '');
    assert.match(thinking.signature, /^mms1h\./);
    assert.deepEqual(
      seen.filter((entry) => entry.url.startsWith('/v1/messages')).map((entry) => entry.status),
      seen.filter((entry) => entry.url.startsWith('/v1/messages')).map(() => 200),
    );
  });
});
