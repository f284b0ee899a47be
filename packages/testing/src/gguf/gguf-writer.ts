// A small GGUF v3 writer: header, key-values and tensor infos are built in memory (they are small even
// for a 32k vocabulary), then tensor data is generated and written chunk by chunk, so a model of
// hundreds of megabytes never has to sit in memory whole.
import { open, type FileHandle } from 'node:fs/promises';
import { float32ArrayToFloat16 } from './float16.js';
import { Q4_0_BLOCK_BYTES, Q8_0_BLOCK_BYTES, QUANTIZATION_BLOCK, quantizeQ4_0, quantizeQ8_0 } from './quantize.js';

export type GgufMetadataValue =
  | { type: 'uint32'; value: number }
  | { type: 'int32'; value: number }
  | { type: 'float32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'string[]'; value: readonly string[] }
  | { type: 'float32[]'; value: ArrayLike<number> }
  | { type: 'int32[]'; value: ArrayLike<number> };

export type GgufTensorType = 'F32' | 'F16' | 'Q8_0' | 'Q4_0';

export interface GgufTensor {
  name: string;
  /** Dimensions in ggml order: the fastest-varying one (ne[0]) first. */
  shape: readonly number[];
  type: GgufTensorType;
  /** Called in order with consecutive chunks until the tensor is full, so a stateful generator can stream values. */
  fill(chunk: Float32Array): void;
}

export const GGUF_MAGIC = 'GGUF';
export const GGUF_VERSION = 3;
export const GGUF_ALIGNMENT = 32;

// Value type ids from ggml's gguf.h.
const VALUE_TYPE = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const;
interface TensorEncoding {
  /** ggml_type. */
  id: number;
  /** Values per block and the bytes a block takes; 1 and the value's size for the plain types. */
  blockElements: number;
  blockBytes: number;
  /** Writes `values` (whole blocks) into `target` and returns the bytes written. */
  encode(values: Float32Array, target: Uint8Array): number;
}

const TENSOR_TYPE: Record<GgufTensorType, TensorEncoding> = {
  F32: {
    id: 0,
    blockElements: 1,
    blockBytes: 4,
    encode: (values, target) => {
      // Typed arrays are little-endian on every platform Node supports, matching GGUF.
      target.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
      return values.byteLength;
    },
  },
  F16: {
    id: 1,
    blockElements: 1,
    blockBytes: 2,
    encode: (values, target) => {
      float32ArrayToFloat16(values, new Uint16Array(target.buffer, target.byteOffset, values.length));
      return values.length * 2;
    },
  },
  Q4_0: { id: 2, blockElements: QUANTIZATION_BLOCK, blockBytes: Q4_0_BLOCK_BYTES, encode: quantizeQ4_0 },
  Q8_0: { id: 8, blockElements: QUANTIZATION_BLOCK, blockBytes: Q8_0_BLOCK_BYTES, encode: quantizeQ8_0 },
};
const CHUNK_ELEMENTS = 1 << 20;

/** Growable little-endian byte buffer for the header part of the file. */
class ByteBuilder {
  private buffer = Buffer.alloc(1 << 16);
  length = 0;

  private reserve(bytes: number): number {
    if (this.length + bytes > this.buffer.length) {
      const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + bytes));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    const offset = this.length;
    this.length += bytes;
    return offset;
  }

  // Each writer reserves first, then reads `this.buffer`: reserving may replace the buffer.
  uint32(value: number): void {
    const offset = this.reserve(4);
    this.buffer.writeUInt32LE(value, offset);
  }
  int32(value: number): void {
    const offset = this.reserve(4);
    this.buffer.writeInt32LE(value, offset);
  }
  float32(value: number): void {
    const offset = this.reserve(4);
    this.buffer.writeFloatLE(value, offset);
  }
  uint64(value: number): void {
    const offset = this.reserve(8);
    this.buffer.writeBigUInt64LE(BigInt(value), offset);
  }
  bool(value: boolean): void {
    const offset = this.reserve(1);
    this.buffer.writeUInt8(value ? 1 : 0, offset);
  }
  zeros(count: number): void {
    this.reserve(count);
  }
  ascii(value: string): void {
    const offset = this.reserve(value.length);
    this.buffer.write(value, offset, 'ascii');
  }

  /** GGUF strings are a uint64 byte length followed by UTF-8 bytes, with no terminator. */
  string(value: string): void {
    const byteLength = Buffer.byteLength(value, 'utf8');
    this.uint64(byteLength);
    const offset = this.reserve(byteLength);
    this.buffer.write(value, offset, 'utf8');
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

function paddingFor(offset: number): number {
  return (GGUF_ALIGNMENT - (offset % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT;
}

function writeArray<T>(
  builder: ByteBuilder,
  elementType: number,
  values: ArrayLike<T>,
  writeOne: (value: T) => void,
): void {
  builder.uint32(VALUE_TYPE.array);
  builder.uint32(elementType);
  builder.uint64(values.length);
  for (let index = 0; index < values.length; index++) writeOne(values[index] as T);
}

function writeValue(builder: ByteBuilder, entry: GgufMetadataValue): void {
  switch (entry.type) {
    case 'uint32':
      builder.uint32(VALUE_TYPE.uint32);
      builder.uint32(entry.value);
      return;
    case 'int32':
      builder.uint32(VALUE_TYPE.int32);
      builder.int32(entry.value);
      return;
    case 'float32':
      builder.uint32(VALUE_TYPE.float32);
      builder.float32(entry.value);
      return;
    case 'bool':
      builder.uint32(VALUE_TYPE.bool);
      builder.bool(entry.value);
      return;
    case 'string':
      builder.uint32(VALUE_TYPE.string);
      builder.string(entry.value);
      return;
    case 'string[]':
      return writeArray(builder, VALUE_TYPE.string, entry.value, (value) => builder.string(value));
    case 'float32[]':
      return writeArray(builder, VALUE_TYPE.float32, entry.value, (value) => builder.float32(value));
    case 'int32[]':
      return writeArray(builder, VALUE_TYPE.int32, entry.value, (value) => builder.int32(value));
  }
}

export function tensorElementCount(tensor: Pick<GgufTensor, 'shape'>): number {
  return tensor.shape.reduce((product, dimension) => product * dimension, 1);
}

function tensorDataBytes(tensor: GgufTensor): number {
  const { blockElements, blockBytes } = TENSOR_TYPE[tensor.type];
  // ggml quantizes row by row, so a row (ne[0]) must hold whole blocks.
  if ((tensor.shape[0] ?? 1) % blockElements !== 0)
    throw new Error(`${tensor.name}: rows of ${tensor.shape[0]} values do not split into ${tensor.type} blocks`);
  return (tensorElementCount(tensor) / blockElements) * blockBytes;
}

/** Everything before the tensor data: header, key-values (plus general.alignment), tensor infos, padding. */
export function encodeGgufHeader(
  metadata: Readonly<Record<string, GgufMetadataValue>>,
  tensors: readonly GgufTensor[],
): Buffer {
  const entries = Object.entries({
    ...metadata,
    'general.alignment': { type: 'uint32', value: GGUF_ALIGNMENT } as const,
  });
  const builder = new ByteBuilder();
  builder.ascii(GGUF_MAGIC);
  builder.uint32(GGUF_VERSION);
  builder.uint64(tensors.length);
  builder.uint64(entries.length);
  for (const [key, value] of entries) {
    builder.string(key);
    writeValue(builder, value);
  }
  let dataOffset = 0;
  for (const tensor of tensors) {
    builder.string(tensor.name);
    builder.uint32(tensor.shape.length);
    for (const dimension of tensor.shape) builder.uint64(dimension);
    builder.uint32(TENSOR_TYPE[tensor.type].id);
    builder.uint64(dataOffset);
    dataOffset += tensorDataBytes(tensor) + paddingFor(tensorDataBytes(tensor));
  }
  builder.zeros(paddingFor(builder.length));
  return Buffer.from(builder.bytes());
}

async function writeTensorData(file: FileHandle, tensor: GgufTensor): Promise<void> {
  const total = tensorElementCount(tensor);
  const encoding = TENSOR_TYPE[tensor.type];
  // CHUNK_ELEMENTS is a multiple of every block size, so only a tensor's last chunk can be short, and a
  // tensor holds whole blocks (tensorDataBytes), so that one does too.
  const chunk = new Float32Array(Math.min(CHUNK_ELEMENTS, total));
  const encoded = new Uint8Array((chunk.length / encoding.blockElements) * encoding.blockBytes);
  for (let written = 0; written < total; written += chunk.length) {
    const values = chunk.subarray(0, Math.min(chunk.length, total - written));
    tensor.fill(values);
    await file.write(encoded.subarray(0, encoding.encode(values, encoded)));
  }
  const padding = paddingFor(tensorDataBytes(tensor));
  if (padding > 0) await file.write(new Uint8Array(padding));
}

/** Writes a complete GGUF v3 file to `path`, streaming tensor data tensor by tensor. */
export async function writeGguf(
  path: string,
  metadata: Readonly<Record<string, GgufMetadataValue>>,
  tensors: readonly GgufTensor[],
): Promise<void> {
  const file = await open(path, 'w');
  try {
    await file.write(encodeGgufHeader(metadata, tensors));
    for (const tensor of tensors) await writeTensorData(file, tensor);
  } finally {
    await file.close();
  }
}
