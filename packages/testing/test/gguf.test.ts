// The project's own tiny GGUF models: they must load in the real llama.cpp engine, tokenize any text,
// carry a ChatML template, generate, and be written byte-identically from the same options.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getLlama, GgmlType, LlamaCompletion, readGgufFileInfo, type Llama, type LlamaModel } from 'node-llama-cpp';
import { float32ToFloat16 } from '../src/gguf/float16.js';
import { Q4_0_BLOCK_BYTES, Q8_0_BLOCK_BYTES, quantizeQ4_0, quantizeQ8_0 } from '../src/gguf/quantize.js';
import {
  JSON_CLOSING_BIAS,
  parameterCount,
  TINY_LLAMA_CHAT_TEMPLATE,
  tinyLlamaModel,
  tinyLlamaVocabularySize,
  writeTinyLlamaModel,
} from '../src/gguf/tiny-llama.js';

let llama: Llama;
let model: LlamaModel;
let modelPath: string;
let scratchDirectory: string;

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
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

/** The float32 values of one tensor of an F32 model file. */
async function readTensor(path: string, name: string): Promise<number[]> {
  const tensor = ((await readGgufFileInfo(path, { logWarnings: false })).tensorInfo ?? []).find(
    (info) => info.name === name,
  );
  assert.ok(tensor, name);
  return readFloat32s(
    path,
    tensor.fileOffset,
    tensor.dimensions.reduce<number>((product, size) => product * Number(size), 1),
  );
}

/** Tokens each of `runs` seeded temperature-1 completions under `grammar` takes, with node-llama-cpp's default sampler. */
async function completionLengths(
  target: LlamaModel,
  grammarText: string,
  runs: number,
  maxTokens: number,
): Promise<number[]> {
  const context = await target.createContext({ contextSize: 512, threads: 1 });
  try {
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    const grammar = await llama.createGrammar({ grammar: grammarText });
    const lengths: number[] = [];
    for (let seed = 1; seed <= runs; seed++) {
      let length = 0;
      await completion.generateCompletion('{"name": ', {
        grammar,
        maxTokens,
        temperature: 1,
        seed,
        onToken: (tokens) => {
          length += tokens.length;
        },
      });
      lengths.push(length);
    }
    return lengths;
  } finally {
    await context.dispose();
  }
}

/** The logits after the last token of `prompt`, on a one-thread context. */
async function lastLogits(target: LlamaModel, prompt: string): Promise<ReadonlyMap<number, number>> {
  const context = await target.createContext({ contextSize: 256, threads: 1 });
  try {
    const tokens = target.tokenize(prompt);
    const outputs = await context
      .getSequence()
      .controlledEvaluate(
        tokens.map((token, index) =>
          index === tokens.length - 1 ? [token, { generateNext: { logits: true } }] : token,
        ),
      );
    const logits = outputs.at(-1)?.next.logits;
    assert.ok(logits);
    return logits as ReadonlyMap<number, number>;
  } finally {
    await context.dispose();
  }
}

/** Pearson's correlation of two tokens-to-logits maps, over the tokens of the first. */
function correlation(left: ReadonlyMap<number, number>, right: ReadonlyMap<number, number>): number {
  const pairs = [...left].map(([token, value]) => [value, right.get(token) ?? Number.NaN] as const);
  const average = (side: 0 | 1) => pairs.reduce((total, pair) => total + pair[side], 0) / pairs.length;
  const [leftMean, rightMean] = [average(0), average(1)];
  let [product, leftSquares, rightSquares] = [0, 0, 0];
  for (const [leftValue, rightValue] of pairs) {
    const [x, y] = [leftValue - leftMean, rightValue - rightMean];
    product += x * y;
    leftSquares += x * x;
    rightSquares += y * y;
  }
  return product / Math.sqrt(leftSquares * rightSquares);
}

/** A float16 bit pattern's value, decoded independently of float16.ts. */
function float16Value(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  return exponent === 0 ? sign * fraction * 2 ** -24 : sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

const mean = (values: readonly number[]) => values.reduce((total, value) => total + value, 0) / values.length;

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
    assert.equal(
      model.detokenize(model.tokenize('<|im_start|>user\nhi<|im_end|>', true), true),
      '<|im_start|>user\nhi<|im_end|>',
    );
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
    const parameters = tensors.reduce(
      (total, tensor) => total + tensor.dimensions.reduce<number>((product, size) => product * Number(size), 1),
      0,
    );
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

  test('Q8_0 and Q4_0 blocks hold a float16 scale and the values as ggml lays them out', () => {
    const values = Float32Array.from({ length: 64 }, (_, index) => Math.sin(index * 1.7) * (index < 32 ? 0.05 : 3));
    values[40] = -4; // the second block's value of largest magnitude, negative
    const eight = new Uint8Array(2 * Q8_0_BLOCK_BYTES);
    assert.equal(quantizeQ8_0(values, eight), eight.length);
    const four = new Uint8Array(2 * Q4_0_BLOCK_BYTES);
    assert.equal(quantizeQ4_0(values, four), four.length);
    for (let block = 0; block < 2; block++) {
      const slice = values.subarray(block * 32, block * 32 + 32);
      const largest = Math.max(...slice.map(Math.abs));
      const eightView = new DataView(eight.buffer, block * Q8_0_BLOCK_BYTES, Q8_0_BLOCK_BYTES);
      const eightScale = float16Value(eightView.getUint16(0, true));
      assert.equal(eightView.getUint16(0, true), float32ToFloat16(largest / 127));
      const fourView = new DataView(four.buffer, block * Q4_0_BLOCK_BYTES, Q4_0_BLOCK_BYTES);
      const fourScale = float16Value(fourView.getUint16(0, true));
      const signedLargest = slice.find((value) => Math.abs(value) === largest) ?? 0;
      assert.equal(fourView.getUint16(0, true), float32ToFloat16(signedLargest / -8));
      for (let index = 0; index < 32; index++) {
        const value = slice[index] ?? 0;
        const quantized = eightView.getInt8(2 + index);
        assert.ok(Math.abs(quantized) <= 127);
        assert.ok(Math.abs(quantized * eightScale - value) <= eightScale * 0.51, `Q8_0 value ${index}`);
        const byte = fourView.getUint8(2 + (index % 16));
        const level = index < 16 ? byte & 0x0f : byte >> 4;
        // Levels stop at 15, so a value near the opposite extreme is off by up to one step, as in ggml.
        const step = level === 15 ? 1.01 : 0.51;
        assert.ok(Math.abs((level - 8) * fourScale - value) <= Math.abs(fourScale) * step, `Q4_0 value ${index}`);
      }
    }
    // The largest magnitude is stored exactly: 127 in Q8_0, level 0 (-8 times the scale) in Q4_0.
    assert.equal(new DataView(eight.buffer).getInt8(Q8_0_BLOCK_BYTES + 2 + 8), -127);
    assert.equal(new DataView(four.buffer).getUint8(Q4_0_BLOCK_BYTES + 2 + 8) & 0x0f, 0);
    assert.throws(() => quantizeQ8_0(new Float32Array(40), new Uint8Array(100)), /whole blocks of 32/);
  });

  test('Q8_0 and Q4_0 models load with their type and compute what the F32 model does, within rounding', async () => {
    const prompt = '<|im_start|>user\nhello the world<|im_end|>\n<|im_start|>assistant\n';
    const exact = await lastLogits(model, prompt);
    for (const [tensorType, ggmlType, least] of [
      ['Q8_0', GgmlType.Q8_0, 0.999],
      ['Q4_0', GgmlType.Q4_0, 0.95],
    ] as const) {
      const path = join(scratchDirectory, `${tensorType}.gguf`);
      await writeTinyLlamaModel(path, { tensorType });
      const info = await readGgufFileInfo(path, { logWarnings: false });
      const tensors = info.tensorInfo ?? [];
      assert.equal(tensors.find((tensor) => tensor.name === 'blk.1.ffn_up.weight')?.ggmlType, ggmlType);
      assert.equal(tensors.find((tensor) => tensor.name === 'output_norm.weight')?.ggmlType, GgmlType.F32);
      const quantized = await llama.loadModel({ modelPath: path });
      try {
        // A wrong layout (nibbles swapped, scale misplaced) leaves logits about uncorrelated with the F32 model's.
        const agreement = correlation(exact, await lastLogits(quantized, prompt));
        assert.ok(agreement >= least, `${tensorType}: logits correlate ${agreement.toFixed(4)} with F32's`);
        assert.equal((await generateTokens(quantized, 'hello', 5)).length, 5);
      } finally {
        await quantized.dispose();
      }
    }
    await assert.rejects(
      writeTinyLlamaModel(join(scratchDirectory, 'x.gguf'), { tensorType: 'Q8_0', logitBias: { a: 1 } }),
      /F32 or F16/,
    );
  });

  test('float32 to float16 rounds to nearest even and handles the edges', () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.1, 0x2e66],
      [65504, 0x7bff],
      [65520, 0x7c00],
      [1 + 2 ** -11, 0x3c00],
      [1 + 3 * 2 ** -11, 0x3c02],
      [2 ** -24, 0x0001],
      [2 ** -25, 0x0000],
      [3 * 2 ** -25, 0x0002],
      [2 ** -14, 0x0400],
      [Infinity, 0x7c00],
      [-Infinity, 0xfc00],
      [NaN, 0x7e00],
    ];
    for (const [value, bits] of cases) assert.equal(float32ToFloat16(value), bits, `float16 of ${value}`);
  });
});

describe('logit bias', () => {
  let biasedPath: string;
  let biased: LlamaModel;

  before(async () => {
    biasedPath = await tinyLlamaModel({ logitBias: JSON_CLOSING_BIAS });
    biased = await llama.loadModel({ modelPath: biasedPath });
  });

  after(async () => {
    await biased?.dispose();
  });

  test('lifts each chosen piece by its bias over the median logit at every position, and no other', async () => {
    const context = await biased.createContext({ contextSize: 256, threads: 1 });
    try {
      const prompt = biased.tokenize(
        '<|im_start|>user\nhello the world {"name": "x", "ok": [true]}<|im_end|>\n<|im_start|>assistant\n',
        true,
      );
      const outputs = await context
        .getSequence()
        .controlledEvaluate(prompt.map((token) => [token, { generateNext: { logits: true } }]));
      const pieces = { ...JSON_CLOSING_BIAS, ',': 0, '",': 0, a: 0 };
      for (const output of outputs) {
        const logits = output?.next.logits;
        assert.ok(logits);
        const sorted = [...logits.values()].sort((left, right) => left - right);
        const median = sorted[sorted.length >> 1] ?? 0;
        for (const [piece, bias] of Object.entries(pieces)) {
          const [token, ...rest] = biased.tokenize(piece);
          assert.ok(token !== undefined && rest.length === 0, piece);
          const lift = (logits.get(token) ?? Number.NaN) - median;
          assert.ok(
            Math.abs(lift - bias) < 0.1 * Math.abs(bias) + 0.2,
            `${piece}: ${lift.toFixed(3)} over the median, asked ${bias}`,
          );
        }
      }
    } finally {
      await context.dispose();
    }
  });

  test('under a JSON string grammar, biased strings end after a few tokens; unbiased ones run on', async () => {
    const jsonString = String.raw`root ::= "\"" ([^"\\\x00-\x1f] | "\\" ["\\/bfnrt])* "\""`;
    // Capped at 100 tokens: a string that long has run on; unbiased, most would run past 200.
    const biasedLengths = await completionLengths(biased, jsonString, 20, 100);
    const unbiasedLengths = await completionLengths(model, jsonString, 20, 100);
    assert.ok(mean(biasedLengths) < 15, `biased: ${biasedLengths.join(' ')}`);
    assert.ok(
      mean(unbiasedLengths) > 4 * mean(biasedLengths),
      `unbiased: ${unbiasedLengths.join(' ')}; biased: ${biasedLengths.join(' ')}`,
    );
  });

  test('only the constant channel changes: embedding dimension 0, the rows writing it, the output weights reading it', async () => {
    const [embeddingSize, feedForwardSize] = [64, 128];
    const read = async (name: string): Promise<[number[], number[]]> => [
      await readTensor(modelPath, name),
      await readTensor(biasedPath, name),
    ];
    const [plainEmbedding, biasedEmbedding] = await read('token_embd.weight');
    const constant = biasedEmbedding[0] ?? 0;
    assert.ok(constant > 0.5, `constant channel ${constant}`);
    biasedEmbedding.forEach((value, index) =>
      assert.equal(value, index % embeddingSize === 0 ? constant : plainEmbedding[index], `token_embd[${index}]`),
    );
    // ggml rows are ne0 (the input size) long, one per output dimension: row 0 is what writes dimension 0.
    const [plainAttention, biasedAttention] = await read('blk.1.attn_output.weight');
    biasedAttention.forEach((value, index) =>
      assert.equal(value, index < embeddingSize ? 0 : plainAttention[index], `attn_output[${index}]`),
    );
    const [plainDown, biasedDown] = await read('blk.0.ffn_down.weight');
    biasedDown.forEach((value, index) =>
      assert.equal(value, index < feedForwardSize ? 0 : plainDown[index], `ffn_down[${index}]`),
    );
    const [plainOutput, biasedOutput] = await read('output.weight');
    const biasedTokens = new Set<number>(
      Object.keys(JSON_CLOSING_BIAS).map((piece) => biased.tokenize(piece)[0] ?? -1),
    );
    biasedOutput.forEach((value, index) => {
      const token = Math.floor(index / embeddingSize);
      if (index % embeddingSize !== 0) assert.equal(value, plainOutput[index], `output[${index}]`);
      else if (biasedTokens.has(token))
        assert.ok(value > 0, `output weight of biased token ${token} on the constant channel: ${value}`);
      else assert.equal(value, 0, `output weight of token ${token} on the constant channel`);
    });
    assert.deepEqual(...(await read('blk.0.attn_q.weight')));
  });

  test('no or an empty bias is the usual file; the cache key ignores key order; unknown pieces are refused', async () => {
    assert.equal(await tinyLlamaModel({ logitBias: {} }), modelPath);
    assert.equal(await tinyLlamaModel({ logitBias: undefined }), modelPath);
    assert.notEqual(biasedPath, modelPath);
    const reversed = Object.fromEntries(Object.entries(JSON_CLOSING_BIAS).reverse());
    assert.equal(await tinyLlamaModel({ logitBias: reversed }), biasedPath);
    await assert.rejects(
      writeTinyLlamaModel(join(scratchDirectory, 'unknown.gguf'), { logitBias: { ' "': 1 } }),
      /not a piece of the vocabulary/,
    );
    await assert.rejects(tinyLlamaModel({ logitBias: { '"': Number.NaN } }), /not a finite number/);
  });
});
