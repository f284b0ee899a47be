/**
 * Bytes one generated token has to read from memory, from the GGUF's own tensor table: at batch
 * size 1 every weight matrix is streamed once per token, and the model is far larger than any
 * cache, so these bytes set the speed limit a perfectly memory-bound engine would reach.
 */
import { stat } from 'node:fs/promises';
import { readGgufFileInfo, type GgufTensorInfo } from 'node-llama-cpp';

export interface TokenTraffic {
  fileBytes: number;
  /** Weights read per token: every tensor, except only one row of the token embedding table. */
  weightBytes: number;
  /** Key and value cache bytes read per token at the mean position of the generation. */
  kvCacheBytes: number;
  meanPosition: number;
}

/** node-llama-cpp's default cache type (experimentalKvCacheKeyType / ValueType: F16). */
const KV_CACHE_BYTES_PER_VALUE = 2;

/** Tensor sizes from the gaps between data offsets: right for every ggml type, padding included (at most the alignment). */
function tensorSizes(tensors: readonly GgufTensorInfo[], fileBytes: number): Map<string, number> {
  const ordered = [...tensors].sort((left, right) => Number(left.fileOffset) - Number(right.fileOffset));
  return new Map(
    ordered.map((tensor, index) => {
      const end = index + 1 < ordered.length ? Number(ordered[index + 1]?.fileOffset) : fileBytes;
      return [tensor.name, end - Number(tensor.fileOffset)];
    }),
  );
}

function dimension(tensor: GgufTensorInfo | undefined, index: number): number {
  const value = tensor?.dimensions[index];
  if (value === undefined) throw new Error(`tensor ${tensor?.name ?? '(missing)'} has no dimension ${index}`);
  return Number(value);
}

/**
 * The embedding table is only indexed (one row per token), unless the model ties its output
 * projection to it: then the whole table is multiplied for the logits.
 */
function embeddingBytesRead(tensors: readonly GgufTensorInfo[], sizes: Map<string, number>): number {
  const embedding = tensors.find((tensor) => tensor.name === 'token_embd.weight');
  if (!embedding) return 0;
  const bytes = sizes.get(embedding.name) ?? 0;
  const tiedOutput = !tensors.some((tensor) => tensor.name === 'output.weight');
  return tiedOutput ? bytes : bytes / dimension(embedding, 1);
}

/** Per position and layer, the cache holds one key and one value vector of the K/V projection width. */
function kvCacheBytesPerPosition(tensors: readonly GgufTensorInfo[]): number {
  const keyProjections = tensors.filter((tensor) => tensor.name.endsWith('.attn_k.weight'));
  const keyWidth = dimension(keyProjections[0], 1);
  return keyProjections.length * 2 * keyWidth * KV_CACHE_BYTES_PER_VALUE;
}

/** `promptTokens` are in the cache before the first generated token; the cache then grows by one per token. */
export async function tokenTraffic(
  modelPath: string,
  promptTokens: number,
  generatedTokens: number,
): Promise<TokenTraffic> {
  const fileBytes = (await stat(modelPath)).size;
  const tensors =
    (await readGgufFileInfo(modelPath, { readTensorInfo: true, logWarnings: false })).fullTensorInfo ?? [];
  if (tensors.length === 0) throw new Error(`no tensor table in ${modelPath}`);
  const sizes = tensorSizes(tensors, fileBytes);
  const nonEmbeddingBytes = [...sizes]
    .filter(([name]) => name !== 'token_embd.weight')
    .reduce((total, [, bytes]) => total + bytes, 0);
  const meanPosition = promptTokens + generatedTokens / 2;
  return {
    fileBytes,
    weightBytes: nonEmbeddingBytes + embeddingBytesRead(tensors, sizes),
    kvCacheBytes: kvCacheBytesPerPosition(tensors) * meanPosition,
    meanPosition,
  };
}
