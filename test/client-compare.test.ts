/** The tier move check: recorded call-site inputs on two models, compared, and `mms compare` printing it. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startService, type RunningService } from '@model-messages/testing';
import { compareModels } from '@model-messages/client';
import { runCompareCommand } from '@model-messages/client/compare-command';
import { clientFor, modelsOnScripts, scriptFolder } from './client-support.js';
import { MMS } from './mms-command.js';

const record = (founder: string) => [[{ type: 'tool_use', name: 'record_answer', input: { founder } }]];
// The candidate misses the known answer on the Acme memo and agrees on the Beta memo.
const currentScript = [
  { when: 'Acme memo', steps: record('Jane Roe') },
  { when: 'Beta memo', steps: record('Bo Li') },
];
const candidateScript = [
  { when: 'Acme memo', steps: record('John Doe') },
  { when: 'Beta memo', steps: record('Bo Li') },
];

let service: RunningService;
let folder: string;
before(async () => {
  folder = scriptFolder({ 'current.json': currentScript, 'candidate.json': candidateScript });
  const models = modelsOnScripts({ 'mid-older': 'current.json', 'mid-newer': 'candidate.json' });
  service = await startService({ models }, folder);
});
after(() => service.close());

const callSites = [
  {
    name: 'extract-founder',
    instructions: 'Extract the founder.',
    schema: {
      type: 'object',
      properties: { founder: { type: 'string' } },
      required: ['founder'],
      additionalProperties: false,
    },
    maxTokens: 256,
    inputs: [
      { input: 'Acme memo: founded by Jane Roe.', expected: { founder: 'jane roe' } },
      { input: 'Beta memo: Bo Li.' },
    ],
  },
];
const current = {
  id: 'mid-older',
  tier: 'mid' as const,
  generation: 'older' as const,
  contextWindow: 200_000,
  maxOutputTokens: 4_096,
};
const candidate = { id: 'mid-newer', tier: 'mid' as const, contextWindow: 200_000, maxOutputTokens: 4_096 };

test('per call site: validity on each model, agreement between them, hits on known answers', async () => {
  const report = await compareModels(clientFor(service.baseURL, service.apiKey), {
    current,
    candidate,
    runs: 2,
    callSites,
  });
  assert.deepEqual(report.callSites, [
    {
      name: 'extract-founder',
      current: { model: 'mid-older', valid: 4, runs: 4, knownRuns: 2, knownHits: 2, failures: {} },
      candidate: { model: 'mid-newer', valid: 4, runs: 4, knownRuns: 2, knownHits: 0, failures: {} },
      compared: 4,
      agreed: 2,
    },
  ]);
});

test('mms compare prints the table; a bad file is exit status 2 with the reason', async () => {
  const file = join(folder, 'compare.json');
  writeFileSync(file, JSON.stringify({ current, candidate, runs: 1, callSites }));
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { MMS_API_KEY: service.apiKey },
  };
  assert.equal(await runCompareCommand([file, '--base-url', service.baseURL], io), 0, stderr);
  const lines = stdout.trim().split('\n');
  assert.equal(lines[0], 'mid-older -> mid-newer, 1 runs per input');
  assert.match(
    lines[1] ?? '',
    /^call site\s+valid mid-older\s+valid mid-newer\s+agreement\s+known mid-older\s+known mid-newer\s+failures \(candidate\)$/,
  );
  assert.match(lines[3] ?? '', /^extract-founder\s+2\/2\s+2\/2\s+1\/2\s+1\/1\s+0\/1\s+-$/);

  writeFileSync(file, JSON.stringify({ current, callSites }));
  assert.equal(await runCompareCommand([file, '--base-url', service.baseURL], io), 2);
  assert.match(stderr, /"current" and "candidate" are required/);
});

/** The command as a user runs it: a child process, so the service in this process keeps answering (no spawnSync). */
// From the workspace root, where the bin finds the client (test/cli.test.ts runs it where it cannot).
const runMms = (args: string[], env: Record<string, string>) =>
  promisify(execFile)(process.execPath, [...MMS, ...args], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );

test('mms compare end to end through the bin: a recorded-inputs file against the scripted service', async () => {
  const file = join(folder, 'recorded.json');
  writeFileSync(file, JSON.stringify({ current, candidate, runs: 2, callSites }));
  const result = await runMms(['compare', file, '--base-url', service.baseURL], { MMS_API_KEY: service.apiKey });
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trim().split('\n');
  assert.equal(lines[0], 'mid-older -> mid-newer, 2 runs per input');
  assert.match(lines[3] ?? '', /^extract-founder\s+4\/4\s+4\/4\s+2\/4\s+2\/2\s+0\/2\s+-$/);
});
