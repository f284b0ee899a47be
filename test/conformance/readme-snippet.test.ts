/**
 * The README's TypeScript snippet, run as it is written with each official client: the one
 * `npm i @anthropic-ai/sdk` installs today (1.x) and 0.137. Only the address changes (the
 * service listens on a free port, not 8080) and where the package is found (1.x is installed
 * here under an alias); a line after it prints the message. Its types are stripped by esbuild,
 * as tsx does (through esbuild) when a user runs it with tsx, and it runs under plain node: tsx's
 * loader hooks made each run cost about three times the CPU.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import { transform } from 'esbuild';
import { startService, type RunningService } from '@model-messages/testing';
import { forEachOfficialClient } from './support.js';

const README_ADDRESS = 'http://127.0.0.1:8080';
const README_KEY = 'change-me-please';
const README_IMPORT = "from '@anthropic-ai/sdk';";

function readmeSnippet(): string {
  const blocks = [...fs.readFileSync('README.md', 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)];
  assert.equal(blocks.length, 1, 'the README has one TypeScript snippet');
  const snippet = blocks[0]![1]!;
  for (const part of [README_IMPORT, README_ADDRESS, README_KEY, 'const message = ']) {
    assert.ok(snippet.includes(part), `the snippet has ${part}`);
  }
  return snippet;
}

/** The environment without ANTHROPIC_* variables, which the clients read (a base URL, extra headers). */
function environmentWithoutClientSettings(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ANTHROPIC_')));
}

let service: RunningService;
let folder = '';
before(async () => {
  service = await startService({ apiKeys: [README_KEY] });
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'mms-readme-'));
});
after(async () => {
  await service.close();
  fs.rmSync(folder, { recursive: true, force: true });
});

forEachOfficialClient((official) => {
  test('the snippet gets the echo from the mid model', async () => {
    const program =
      readmeSnippet()
        .replace(README_IMPORT, `from '${import.meta.resolve(official.moduleName)}';`)
        .replace(README_ADDRESS, service.baseURL) + 'console.log(JSON.stringify(message));\n';
    const file = path.join(folder, `${official.moduleName.replaceAll('/', '-')}.mjs`);
    fs.writeFileSync(file, (await transform(program, { loader: 'ts', format: 'esm', target: 'node20' })).code);
    const { stdout } = await promisify(execFile)(process.execPath, [file], {
      env: environmentWithoutClientSettings(),
      timeout: 60_000,
    });
    const message = JSON.parse(stdout) as Message;
    assert.equal(message.type, 'message');
    assert.equal(message.model, 'mid-newer');
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hello', citations: null }]);
    assert.equal(message.stop_reason, 'end_turn');
  });
});
