/**
 * Getting models with the `mms` command: offline, `serve` names every model it lacks and the one
 * command that fetches them; `pull --config` fetches just those, through HF_ENDPOINT's mirror,
 * and says when there is nothing to fetch. No test here reaches the internet: HF_ENDPOINT is a
 * closed loopback port (offline) or a stand-in mirror on loopback, and MMS_MODELS_FOLDER a
 * fresh temporary folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// From their modules, not the package's index, which loads the whole service (0.6 s of CPU) that
// only the started commands run here.
import { startHuggingFaceMirror } from '../packages/testing/src/hugging-face-mirror.js';
import { tinyLlamaModel } from '../packages/testing/src/gguf/tiny-llama.js';
import { MMS } from './mms-command.js';

const KEY = 'cli-test-key-123';
/** Port 9 (discard) on loopback has no listener: a download is refused at once, as offline. */
const OFFLINE = 'http://127.0.0.1:9/';

interface Finished {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `mms` with a fresh models folder unless `env` names one. MODEL_ENDPOINT is cleared: in
 * node-llama-cpp it wins over HF_ENDPOINT, and a value from the shell must not reach the network.
 */
async function runMms(args: string[], env: Record<string, string>): Promise<Finished> {
  const child = spawn(process.execPath, [...MMS, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      MMS_DATA_FOLDER: mkdtempSync(join(tmpdir(), 'mms-cli-data-')),
      MMS_MODELS_FOLDER: mkdtempSync(join(tmpdir(), 'mms-cli-models-')),
      MODEL_ENDPOINT: '',
      ...env,
    },
    timeout: 30_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

function llamaModel(id: string, model: string): Record<string, unknown> {
  return {
    id,
    tier: 'mid',
    generation: 'newer',
    contextWindow: 4096,
    maxOutputTokens: 512,
    backend: { type: 'llama-cpp', model },
  };
}

test('offline with the built-in config, serve names all three models and `npx mms pull`, exit 2', async () => {
  const run = await runMms(['serve'], { MMS_API_KEYS: KEY, HF_ENDPOINT: OFFLINE });
  assert.equal(run.status, 2, run.stderr);
  const lines = run.stderr.split('\n');
  assert.match(lines[0]!, /^mms: hf:Qwen\/Qwen3-1\.7B-GGUF:Q8_0 could not be downloaded \(.+\)\.$/);
  assert.match(lines[1]!, /^mms: these 3 models are not in .*mms-cli-models-.* yet:$/);
  assert.deepEqual(lines.slice(2, 5), [
    '  mms-small: hf:Qwen/Qwen3-1.7B-GGUF:Q8_0',
    '  mms-mid: hf:Qwen/Qwen3-4B-GGUF:Q4_K_M',
    '  mms-large: hf:Qwen/Qwen3-8B-GGUF:Q4_K_M',
  ]);
  assert.match(lines[5]!, /^mms: fetch them all with `npx mms pull` \(/);
});

test('serve offline lists only the missing models; pull --config fetches just those through the HF_ENDPOINT mirror, then has nothing to fetch', async () => {
  const tiny = await tinyLlamaModel();
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  const models = mkdtempSync(join(tmpdir(), 'mms-cli-models-'));
  // One model is in the folder already: the index names the file it became.
  writeFileSync(join(models, 'mms-models.json'), JSON.stringify({ 'hf:someone/cached-GGUF:Q8_0': tiny }));
  const config = join(folder, 'three.json');
  writeFileSync(
    config,
    JSON.stringify({
      apiKeys: [KEY],
      models: [
        llamaModel('first', 'hf:someone/first-GGUF:Q4_K_M'),
        llamaModel('cached', 'hf:someone/cached-GGUF:Q8_0'),
        // The same file under two ids is fetched once.
        llamaModel('second', 'hf:someone/second-GGUF:Q4_K_M'),
        llamaModel('second-again', 'hf:someone/second-GGUF:Q4_K_M'),
      ],
    }),
  );
  const offline = await runMms(['serve', '--config', config], { MMS_MODELS_FOLDER: models, HF_ENDPOINT: OFFLINE });
  assert.equal(offline.status, 2, offline.stderr);
  assert.match(offline.stderr, /^mms: hf:someone\/first-GGUF:Q4_K_M could not be downloaded/);
  assert.match(
    offline.stderr,
    new RegExp(
      `\nmms: these 3 models are not in ${models} yet:\n` +
        '  first: hf:someone/first-GGUF:Q4_K_M\n' +
        '  second: hf:someone/second-GGUF:Q4_K_M\n' +
        '  second-again: hf:someone/second-GGUF:Q4_K_M\n' +
        `mms: fetch them all with \`npx mms pull --config ${config}\``,
    ),
  );

  const mirror = await startHuggingFaceMirror({ 'someone/first-GGUF': tiny, 'someone/second-GGUF': tiny });
  try {
    const pulled = await runMms(['pull', '--config', config], {
      MMS_MODELS_FOLDER: models,
      HF_ENDPOINT: mirror.origin,
    });
    assert.equal(pulled.status, 0, pulled.stderr);
    // The file two models share is fetched once.
    assert.equal(pulled.stdout.split('\n').filter((line) => line.includes(' -> ')).length, 2, pulled.stdout);
    assert.match(pulled.stdout, new RegExp(`^hf:someone/first-GGUF:Q4_K_M -> ${models}/\\S+\\.gguf$`, 'm'));
    assert.match(pulled.stdout, new RegExp(`^hf:someone/second-GGUF:Q4_K_M -> ${models}/\\S+\\.gguf$`, 'm'));
    // The two missing files (node-llama-cpp's downloader asks for each twice: a probe, then the
    // body), and nothing for the model already here.
    const downloads = mirror.served.filter((request) => request.includes('/resolve/'));
    assert.deepEqual([...new Set(downloads)].sort(), [
      'GET /someone/first-GGUF/resolve/main/first-Q4_K_M.gguf',
      'GET /someone/second-GGUF/resolve/main/second-Q4_K_M.gguf',
    ]);
    assert.ok(!mirror.served.some((request) => request.includes('cached')), mirror.served.join(', '));
  } finally {
    await mirror.close();
  }

  const again = await runMms(['pull', '--config', config], { MMS_MODELS_FOLDER: models, HF_ENDPOINT: OFFLINE });
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^nothing to fetch: every model of ${config} is already here\n`));
  assert.match(again.stdout, new RegExp(`\n  hf:someone/cached-GGUF:Q8_0 -> ${tiny}\n`));
});

test('pull with no model to fetch says so and exits 0; a local model file that is missing is named, exit 1', async () => {
  const tiny = await tinyLlamaModel();
  const folder = mkdtempSync(join(tmpdir(), 'mms-cli-'));
  writeFileSync(join(folder, 'local.json'), JSON.stringify({ models: [llamaModel('local', tiny)] }));
  writeFileSync(
    join(folder, 'absent.json'),
    JSON.stringify({ models: [llamaModel('absent', './models/absent.gguf')] }),
  );
  const [scripted, local, absent] = await Promise.all([
    runMms(['pull', '--config', 'examples/scripted.json'], { HF_ENDPOINT: OFFLINE }),
    runMms(['pull', '--config', join(folder, 'local.json')], { HF_ENDPOINT: OFFLINE }),
    runMms(['pull', '--config', join(folder, 'absent.json')], { HF_ENDPOINT: OFFLINE }),
  ]);
  assert.equal(scripted.status, 0, scripted.stderr);
  assert.equal(scripted.stdout, 'nothing to fetch: examples/scripted.json names no hf: or https: model\n');
  assert.equal(local.status, 0, local.stderr);
  assert.match(local.stdout, /^nothing to fetch: /);
  assert.equal(absent.status, 1);
  assert.equal(
    absent.stderr,
    `mms pull: model absent: local file ${join(folder, 'models/absent.gguf')} does not exist (pull fetches only hf: and https: models)\n`,
  );
});
