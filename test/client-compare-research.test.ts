/**
 * The tier move check over research call sites (issue 32; spec, Versioning: "each call site is
 * run on real inputs and answers are compared"): both passes on each model, against the real
 * service with scripted large models, a fake search engine, and `mms compare` reading a file that
 * holds a research and a structured call site.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TEST_API_KEY } from '@model-messages/testing';
import { compareModels, type CallSite } from '@model-messages/client';
import { runCompareCommand } from '@model-messages/client/compare-command';
import { CONTEXT_WINDOW, clientFor, MAX_OUTPUT, modelsOnScripts, scriptFolder } from './client-support.js';
import { MMS } from './mms-command.js';
import { startResearchService, type ResearchService } from './research-service-support.js';

const search = (query: string) => [{ type: 'server_tool_use', name: 'web_search', input: { query } }];
const prose = (text: string) => [{ type: 'text', text }];
/** Pass 2's tool input is the envelope that admits `Insufficient data` (decision 0010). */
const shaped = (answer: unknown) => [[{ type: 'tool_use', name: 'record_answer', input: { answer } }]];
const passOne = (question: string) => `^\\{\\s*"question": "${question}`;
const passTwo = (question: string) => `^<context>[\\s\\S]*${question}`;
const structured = (founder: string) => [[{ type: 'tool_use', name: 'record_answer', input: { founder } }]];

// The fake search finds acme.example/history [1] and acme.example/people [2] for every query.
// The candidate cites another source and one that does not exist on Acme, misses the known
// answer, and answers Insufficient data on Beta; both agree on the structured Gamma memo.
const currentScript = [
  { when: passOne('Who founded Acme'), steps: [search('Acme'), prose('Acme was founded by Jane Roe [1].')] },
  { when: passTwo('Who founded Acme'), steps: shaped({ founder: 'Jane Roe' }) },
  { when: passOne('Who runs Beta'), steps: [search('Beta'), prose('Beta is run by Bo Li [2].')] },
  { when: passTwo('Who runs Beta'), steps: shaped({ founder: 'Bo Li' }) },
  { when: 'Gamma memo', steps: structured('Ann Lee') },
];
const candidateScript = [
  { when: passOne('Who founded Acme'), steps: [search('Acme'), prose('Acme was founded by John Doe [2][7].')] },
  { when: passTwo('Who founded Acme'), steps: shaped({ founder: 'John Doe' }) },
  { when: passOne('Who runs Beta'), steps: [prose('Insufficient data')] },
  { when: 'Gamma memo', steps: structured('Ann Lee') },
];

let service: ResearchService;
let folder: string;
before(async () => {
  folder = scriptFolder({ 'current.json': currentScript, 'candidate.json': candidateScript });
  const models = modelsOnScripts({ 'large-older': 'current.json', 'large-newer': 'candidate.json' });
  service = await startResearchService({ models }, folder);
});
after(() => service.close());

const founder = {
  type: 'object',
  properties: { founder: { type: 'string' } },
  required: ['founder'],
  additionalProperties: false,
};
const researchSite: CallSite = {
  kind: 'research',
  name: 'research-founder',
  schema: founder,
  inputs: [{ question: 'Who founded Acme?', expected: { founder: 'Jane Roe' } }, { question: 'Who runs Beta?' }],
};
const structuredSite: CallSite = {
  name: 'extract-founder',
  instructions: 'Extract the founder.',
  schema: founder,
  inputs: [{ input: 'Gamma memo: founded by Ann Lee.', expected: { founder: 'Ann Lee' } }],
};
const limits = { contextWindow: CONTEXT_WINDOW, maxOutputTokens: MAX_OUTPUT };
const current = { id: 'large-older', tier: 'large' as const, generation: 'older' as const, ...limits };
const candidate = { id: 'large-newer', tier: 'large' as const, ...limits };

test('a research call site: pass 2 answers compared like structured ones, pass 1 by prose, sources and citations', async () => {
  const report = await compareModels(clientFor(service.baseURL, TEST_API_KEY), {
    current,
    candidate,
    runs: 2,
    callSites: [researchSite],
  });
  assert.deepEqual(report.callSites, [
    {
      name: 'research-founder',
      current: { model: 'large-older', valid: 4, runs: 4, knownRuns: 2, knownHits: 2, failures: {} },
      candidate: {
        model: 'large-newer',
        valid: 2,
        runs: 4,
        knownRuns: 2,
        knownHits: 0,
        failures: { insufficient_data: 2 },
      },
      compared: 2,
      agreed: 0,
      prose: {
        current: { prose: 4, failures: {}, sources: 8, citations: 4, unresolvedCitations: 0 },
        candidate: {
          prose: 2,
          failures: { insufficient_data: 2 },
          sources: 4,
          citations: 2,
          unresolvedCitations: 2,
        },
        compared: 2,
        sameSources: 0,
      },
    },
  ]);
});

test('mms compare reads research and structured call sites from one file and prints both', async () => {
  const file = join(folder, 'mixed.json');
  writeFileSync(file, JSON.stringify({ current, candidate, runs: 1, callSites: [researchSite, structuredSite] }));
  const result = await promisify(execFile)(process.execPath, [...MMS, 'compare', file, '--base-url', service.baseURL], {
    cwd: process.cwd(),
    env: { ...process.env, MMS_API_KEY: TEST_API_KEY },
  });
  const lines = result.stdout.trim().split('\n');
  assert.equal(lines[0], 'large-older -> large-newer, 1 runs per input');
  assert.match(lines[3] ?? '', /^research-founder\s+2\/2\s+1\/2\s+0\/1\s+1\/1\s+0\/1\s+insufficient_data 1$/);
  assert.equal(
    lines[4],
    "  pass 1 (current vs candidate): prose 2/2 vs 1/2; sources 4 vs 2; citations 2 vs 1; naming no source 0 vs 1; same sources cited 0/1; candidate's other endings insufficient_data 1",
  );
  assert.match(lines[5] ?? '', /^extract-founder\s+1\/1\s+1\/1\s+1\/1\s+1\/1\s+1\/1\s+-$/);
  assert.equal(lines.length, 6);
});

test('a research call site without a question in each input, or an unknown kind, is a file error, exit status 2', async () => {
  const file = join(folder, 'unasked.json');
  writeFileSync(
    file,
    JSON.stringify({ current, candidate, callSites: [{ ...researchSite, inputs: [{ input: 'Acme memo' }] }] }),
  );
  let stderr = '';
  const io = {
    stdout: { write: () => true },
    stderr: { write: (text: string) => (stderr += text) },
    env: { MMS_API_KEY: TEST_API_KEY },
  };
  assert.equal(await runCompareCommand([file, '--base-url', service.baseURL], io), 2);
  assert.equal(
    stderr,
    `mms compare: ${file}: callSites.0 (research) needs name, schema and inputs, each with a question\n`,
  );
  stderr = '';
  writeFileSync(file, JSON.stringify({ current, candidate, callSites: [{ ...structuredSite, kind: 'batch' }] }));
  assert.equal(await runCompareCommand([file, '--base-url', service.baseURL], io), 2);
  assert.equal(
    stderr,
    `mms compare: ${file}: callSites.0 kind: "structured" (the default) or "research", got "batch"\n`,
  );
});
