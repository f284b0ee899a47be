/** Where GGUF files come from: local paths, downloads into the cache folder, and clear failures. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, createReadStream, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHuggingFaceMirror, tinyLlamaModel } from '@model-messages/testing';
import { findModelFile, modelFile } from '../src/backends/llama-cpp/model-file.js';

test('a local path resolves against the config folder; a missing one says which', async () => {
  const path = await tinyLlamaModel();
  assert.equal(await modelFile(path, { configFolder: '/', progress: false }), path);
  await assert.rejects(
    modelFile('absent.gguf', { configFolder: '/tmp', progress: false }),
    /model file \/tmp\/absent\.gguf does not exist/,
  );
});

test('a remote model downloads once into the models folder, then resolves from it with the server gone', async () => {
  const source = await tinyLlamaModel();
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(statSync(source).size),
    });
    if (request.method === 'HEAD') response.end();
    else createReadStream(source).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tiny.gguf`;
  const folder = mkdtempSync(join(tmpdir(), 'mms-models-'));
  const downloaded = await modelFile(url, { configFolder: '/', modelsFolder: folder, progress: false });
  assert.ok(downloaded.startsWith(folder));
  assert.equal(statSync(downloaded).size, statSync(source).size);
  assert.ok(requests > 0);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.equal(await modelFile(url, { configFolder: '/', modelsFolder: folder, progress: false }), downloaded);
});

test('offline and not cached is a clear error that says what to do, not a hang', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'mms-models-'));
  // A Hugging Face endpoint on a loopback port with no listener: refused at once, as offline is.
  process.env.HF_ENDPOINT = 'http://127.0.0.1:9/';
  try {
    await assert.rejects(
      modelFile('hf:nobody/absent-GGUF:Q4_K_M', { configFolder: '/', modelsFolder: folder, progress: false }),
      (error: Error) =>
        /is not in .* and could not be downloaded/.test(error.message) &&
        /npx mms pull hf:nobody\/absent-GGUF:Q4_K_M/.test(error.message),
    );
  } finally {
    delete process.env.HF_ENDPOINT;
  }
});

test('HF_ENDPOINT is honoured: an hf: URI resolves and downloads through the mirror it names, then is found offline', async () => {
  const source = await tinyLlamaModel();
  const mirror = await startHuggingFaceMirror({ 'someone/tiny-GGUF': source });
  const folder = mkdtempSync(join(tmpdir(), 'mms-models-'));
  const options = { configFolder: '/', modelsFolder: folder, progress: false };
  // MODEL_ENDPOINT would win over HF_ENDPOINT in node-llama-cpp: a value from the shell must not steer this test.
  const modelEndpoint = process.env.MODEL_ENDPOINT;
  delete process.env.MODEL_ENDPOINT;
  process.env.HF_ENDPOINT = mirror.origin;
  try {
    assert.equal(findModelFile('hf:someone/tiny-GGUF:Q8_0', options), undefined);
    const downloaded = await modelFile('hf:someone/tiny-GGUF:Q8_0', options);
    assert.ok(downloaded.startsWith(folder));
    assert.equal(statSync(downloaded).size, statSync(source).size);
    assert.ok(mirror.served.includes('GET /v2/someone/tiny-GGUF/manifests/Q8_0'), mirror.served.join(', '));
    assert.ok(mirror.served.includes('GET /someone/tiny-GGUF/resolve/main/tiny-Q8_0.gguf'), mirror.served.join(', '));
  } finally {
    delete process.env.HF_ENDPOINT;
    if (modelEndpoint !== undefined) process.env.MODEL_ENDPOINT = modelEndpoint;
    await mirror.close();
  }
  // The mirror is gone and HF_ENDPOINT unset: the index alone finds the file.
  assert.equal(
    findModelFile('hf:someone/tiny-GGUF:Q8_0', options),
    await modelFile('hf:someone/tiny-GGUF:Q8_0', options),
  );
});

test('a models folder copied from another machine is found offline, though its index names the old paths', async () => {
  const source = await tinyLlamaModel();
  const folder = mkdtempSync(join(tmpdir(), 'mms-models-'));
  copyFileSync(source, join(folder, 'hf_someone_tiny.Q8_0.gguf'));
  writeFileSync(
    join(folder, 'mms-models.json'),
    JSON.stringify({ 'hf:someone/tiny-GGUF:Q8_0': '/elsewhere/models/hf_someone_tiny.Q8_0.gguf' }),
  );
  const options = { configFolder: '/', modelsFolder: folder, progress: false };
  assert.equal(findModelFile('hf:someone/tiny-GGUF:Q8_0', options), join(folder, 'hf_someone_tiny.Q8_0.gguf'));
  assert.equal(findModelFile('hf:someone/other-GGUF:Q8_0', options), undefined);
});
