// ggml's two simplest block quantizations, as its reference quantizers write them
// (quantize_row_q8_0_ref, quantize_row_q4_0_ref). Their arithmetic is float32: Math.fround after
// each step gives the same results (double rounding is exact for one operation on float32 values),
// so values on a rounding boundary round as they do there. Test models can then be stored as real
// deployments on a CPU store theirs, which llama.cpp runs with other kernels than F16: Q4_0 weights
// are repacked, and four tokens at once go through one matrix product (bench/llama-concurrency.ts).
import { float32ToFloat16 } from './float16.js';

/** Elements per block, in both formats. */
export const QUANTIZATION_BLOCK = 32;
/** A float16 scale, then 32 signed bytes. */
export const Q8_0_BLOCK_BYTES = 2 + QUANTIZATION_BLOCK;
/** A float16 scale, then 32 four-bit values packed two to a byte. */
export const Q4_0_BLOCK_BYTES = 2 + QUANTIZATION_BLOCK / 2;

function checkBlocks(values: Float32Array, target: Uint8Array, blockBytes: number): number {
  if (values.length % QUANTIZATION_BLOCK !== 0)
    throw new Error(`quantized tensors need whole blocks of ${QUANTIZATION_BLOCK} values, got ${values.length}`);
  const blocks = values.length / QUANTIZATION_BLOCK;
  if (target.length < blocks * blockBytes) throw new Error('quantization target is too small');
  return blocks;
}

/** Q8_0: scale = the block's largest magnitude / 127, each value rounded to a multiple of it. */
export function quantizeQ8_0(values: Float32Array, target: Uint8Array): number {
  const blocks = checkBlocks(values, target, Q8_0_BLOCK_BYTES);
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  for (let block = 0; block < blocks; block++) {
    const start = block * QUANTIZATION_BLOCK;
    let largest = 0;
    for (let index = 0; index < QUANTIZATION_BLOCK; index++)
      largest = Math.max(largest, Math.abs(values[start + index] ?? 0));
    const scale = Math.fround(largest / 127);
    const inverse = scale === 0 ? 0 : Math.fround(1 / scale);
    const offset = block * Q8_0_BLOCK_BYTES;
    view.setUint16(offset, float32ToFloat16(scale), true);
    // C's roundf: halves away from zero, which Math.round does not do for negative values.
    for (let index = 0; index < QUANTIZATION_BLOCK; index++) {
      const scaled = Math.fround((values[start + index] ?? 0) * inverse);
      view.setInt8(offset + 2 + index, Math.sign(scaled) * Math.round(Math.abs(scaled)));
    }
  }
  return blocks * Q8_0_BLOCK_BYTES;
}

/**
 * Q4_0: scale = the block's value of largest magnitude / -8, each value stored as 0..15 meaning
 * (stored - 8) * scale; byte j holds value j in its low half and value j + 16 in its high half.
 */
export function quantizeQ4_0(values: Float32Array, target: Uint8Array): number {
  const blocks = checkBlocks(values, target, Q4_0_BLOCK_BYTES);
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  const half = QUANTIZATION_BLOCK / 2;
  for (let block = 0; block < blocks; block++) {
    const start = block * QUANTIZATION_BLOCK;
    let largest = 0;
    let signedLargest = 0;
    for (let index = 0; index < QUANTIZATION_BLOCK; index++) {
      const value = values[start + index] ?? 0;
      if (Math.abs(value) > largest) [largest, signedLargest] = [Math.abs(value), value];
    }
    const scale = Math.fround(signedLargest / -8);
    const inverse = scale === 0 ? 0 : Math.fround(1 / scale);
    const offset = block * Q4_0_BLOCK_BYTES;
    view.setUint16(offset, float32ToFloat16(scale), true);
    // (int8_t)(x + 8.5f) truncates; x >= -8 here, so truncation is floor.
    const level = (value: number) => Math.min(15, Math.trunc(Math.fround(Math.fround(value * inverse) + 8.5)));
    for (let index = 0; index < half; index++) {
      const low = level(values[start + index] ?? 0);
      const high = level(values[start + half + index] ?? 0);
      view.setUint8(offset + 2 + index, low | (high << 4));
    }
  }
  return blocks * Q4_0_BLOCK_BYTES;
}
