// The project's own tiny GGUF models: they must load in the real llama.cpp engine, tokenize any text,
// carry a ChatML template, generate, and be written byte-identically from the same options.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getLlama, GgmlType, readGgufFileInfo, type Llama, type LlamaModel } from 'node-llama-cpp';
import { float32ToFloat16 } from '../src/gguf/float16.js';
import {
  parameterCount, TINY_LLAMA_CHAT_TEMPLATE, tinyLlamaModel, tinyLlamaVocabularySize, writeTinyLlamaModel,
} from '../src/gguf/tiny-llama.js';

let llama: Llama;
let model: LlamaModel;
let modelPath: string;
let scratchDirectory: string;

async function sha256(path: string): Promise<string> {
  return createHash('sha256').update(await readFile(path)).digest('hex');
}

async function readFloat32s(path: string, fileOffset: number | bigint, count: number): Promise<number[]> {
  const file = await open(path, 'r');
  try {
    const { buffer } = await file.read({ buffer: Buffer.alloc(count * 4), position: Number(fileOffset) });
    return Array.from({ length: count }, (_, index) => buffer.readFloatLE(index * 4));
  } finally {
    await file.close();
  }
}

/** Greedy-generates `count` tokens after `prompt` on a one-thread context (the fastest on two cores). */
async function generateTokens(target: LlamaModel, prompt: string, count: number): Promise<number[]> {
  const context = await target.createContext({ contextSize: 256, threads: 1 });
  try {
    const generated: number[] = [];
    for await (const token of context.getSequence().evaluate(target.tokenize(prompt), { temperature: 0 })) {
      generated.push(token);
      if (generated.length >= count) break;
    }
    return generated;
  } finally {
    await context.dispose();
  }
}

before(async () => {
  modelPath = await tinyLlamaModel();
  scratchDirectory = await mkdtemp(join(tmpdir(), 'tiny-llama-'));
  llama = await getLlama({ gpu: false, build: 'never', progressLogs: false });
  model = await llama.loadModel({ modelPath });
});

after(async () => {
  await model?.dispose();
  await llama?.dispose();
  if (scratchDirectory) await rm(scratchDirectory, { recursive: true, force: true });
});

describe('tiny llama model', () => {
  test('loads as a llama model with the whole vocabulary', () => {
    assert.equal(model.fileInfo.metadata.general.architecture, 'llama');
    assert.equal(model.fileInfo.metadata.tokenizer.ggml.tokens.length, tinyLlamaVocabularySize());
    assert.equal(model.fileInfo.metadata.tokenizer.ggml.model, 'llama');
  });

  test('tokenize and detokenize round-trip ASCII and any UTF-8 text', () => {
    for (const text of ['hello world', 'héllo ✓ 日本', ' {"name": "x", "ok": true}\n\t🙂']) {
      const tokens = model.tokenize(text);
      assert.ok(tokens.length > 0);
      assert.equal(model.detokenize(tokens), text);
    }
  });

  test('common words are single tokens, so token counts look like a real model', () => {
    assert.equal(model.tokenize(' the').length, 1);
    assert.equal(model.tokenize('{"').length, 1);
  });

  test('carries the ChatML template and its control tokens; <|im_end|> ends generation', () => {
    assert.equal(model.fileInfo.metadata.tokenizer.chat_template, TINY_LLAMA_CHAT_TEMPLATE);
    const [imStart, ...restStart] = model.tokenize('<|im_start|>', true);
    const [imEnd, ...restEnd] = model.tokenize('<|im_end|>', true);
    assert.deepEqual([restStart, restEnd], [[], []]);
    assert.notEqual(imStart, undefined);
    assert.equal(model.tokens.eos, imEnd);
    assert.equal(model.detokenize(model.tokenize('<|im_start|>user\nhi<|im_end|>', true), true), '<|im_start|>user\nhi<|im_end|>');
  });

  test('a one-thread context generates 20 tokens', async () => {
    const generated = await generateTokens(model, 'hello the world', 20);
    assert.equal(generated.length, 20);
    for (const token of generated) assert.ok(token >= 0 && token < tinyLlamaVocabularySize());
  });

  test('the same options give the same cached file, and a fresh write gives identical bytes', async () => {
    const { mtimeMs } = await stat(modelPath);
    assert.equal(await tinyLlamaModel({}), modelPath);
    assert.equal((await stat(modelPath)).mtimeMs, mtimeMs);
    const freshPath = join(scratchDirectory, 'fresh.gguf');
    await writeTinyLlamaModel(freshPath);
    assert.equal(await sha256(freshPath), await sha256(modelPath));
    assert.notEqual(await tinyLlamaModel({ seed: 2 }), modelPath);
  });
});

describe('gguf writer', () => {
  test('header, tensor infos and tensor offsets read back with node-llama-cpp', async () => {
    const info = await readGgufFileInfo(modelPath, { logWarnings: false });
    const magic = (await readFile(modelPath)).subarray(0, 4).toString('ascii');
    assert.equal(magic, 'GGUF');
    assert.equal(info.version, 3);
    assert.equal(Number(info.tensorCount), 2 + 2 * 9 + 1);
    assert.equal(info.metadata.general.alignment, 32);
    const tensors = info.tensorInfo ?? [];
    const parameters = tensors.reduce((total, tensor) => total + tensor.dimensions.reduce<number>((product, size) => product * Number(size), 1), 0);
    assert.equal(parameters, parameterCount());
    const embedding = tensors.find((tensor) => tensor.name === 'token_embd.weight');
    assert.deepEqual(embedding?.dimensions.map(Number), [64, tinyLlamaVocabularySize()]);
    const norm = tensors.find((tensor) => tensor.name === 'output_norm.weight');
    assert.ok(norm);
    assert.ok(tensors.every((tensor) => Number(tensor.fileOffset) % 32 === 0));
    assert.deepEqual(await readFloat32s(modelPath, norm.fileOffset, 64), new Array<number>(64).fill(1));
  });

  test('an F16 model keeps norms in F32, loads and generates', async () => {
    const path = join(scratchDirectory, 'f16.gguf');
    await writeTinyLlamaModel(path, { tensorType: 'F16', kvHeads: 2 });
    const tensors = (await readGgufFileInfo(path, { logWarnings: false })).tensorInfo ?? [];
    assert.equal(tensors.find((tensor) => tensor.name === 'blk.0.attn_q.weight')?.ggmlType, GgmlType.F16);
    assert.equal(tensors.find((tensor) => tensor.name === 'blk.0.attn_k.weight')?.dimensions.map(Number)[1], 32);
    assert.equal(tensors.find((tensor) => tensor.name === 'blk.0.ffn_norm.weight')?.ggmlType, GgmlType.F32);
    const halfModel = await llama.loadModel({ modelPath: path });
    try {
      assert.equal((await generateTokens(halfModel, 'hello', 5)).length, 5);
    } finally {
      await halfModel.dispose();
    }
  });

  test('float32 to float16 rounds to nearest even and handles the edges', () => {
    const cases: [number, number][] = [
      [0, 0x0000], [-0, 0x8000], [1, 0x3c00], [-2, 0xc000], [0.1, 0x2e66], [65504, 0x7bff], [65520, 0x7c00],
      [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02], [2 ** -24, 0x0001], [2 ** -25, 0x0000], [3 * 2 ** -25, 0x0002],
      [2 ** -14, 0x0400], [Infinity, 0x7c00], [-Infinity, 0xfc00], [NaN, 0x7e00],
    ];
    for (const [value, bits] of cases) assert.equal(float32ToFloat16(value), bits, `float16 of ${value}`);
  });
});
