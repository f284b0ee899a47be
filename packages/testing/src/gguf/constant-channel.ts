// The logit bias of the tiny models (tiny-llama.ts) uses a "constant channel": hidden dimension 0 of
// every token embedding is a constant C, and no layer writes to dimension 0 (the ggml rows of
// attn_output and ffn_down for output 0 are zero), so the residual stream reaches the final RMS
// norm with x[0] = C for every token at every position. After the norm, h[0] = sqrt(n) * C / |x| is
// nearly the same number everywhere, and output.weight's dimension-0 entry of token t, bias_t / h[0],
// adds bias_t to t's logit (0 for unbiased tokens). Every other weight is drawn exactly as without a
// bias: the random stream is consumed, then overwritten.

/** What the channel's size depends on: the model's width and depth, and its weights' spread. */
export interface ChannelShape {
  embeddingSize: number;
  layers: number;
  weightStandardDeviation: number;
}

/**
 * C over the expected length of the rest of the residual stream: large enough that misjudging
 * that length by 2x moves h[0] by 3%.
 */
const CONSTANT_CHANNEL_DOMINANCE = 4;

/**
 * Expected sum of squares of the residual stream outside dimension 0 at the final norm: the embedding's
 * (n - 1) * sd^2, plus per layer about n * (n * sd^2)^2 from attention (its normalised input has length
 * sqrt(n), so each output is about n * sd^2). With it, the measured bias is within 2% of the asked one
 * for 64x2 to 256x6 models and within 11% for TINY_LLAMA_BENCH_OPTIONS.
 */
function residualEnergy({ embeddingSize: size, layers, weightStandardDeviation }: ChannelShape): number {
  const variance = weightStandardDeviation ** 2;
  return (size - 1) * variance + layers * size * (size * variance) ** 2;
}

/** The constant C of dimension 0 in every token embedding. */
export function constantChannel(shape: ChannelShape): number {
  return CONSTANT_CHANNEL_DOMINANCE * Math.sqrt(residualEnergy(shape));
}

/**
 * h[0] after the final norm: sqrt(n) * C / sqrt(C^2 + energy), which with C = D * sqrt(energy)
 * is sqrt(n) * D / sqrt(D^2 + 1).
 */
function constantChannelAfterNorm(shape: ChannelShape): number {
  return (Math.sqrt(shape.embeddingSize) * CONSTANT_CHANNEL_DOMINANCE) / Math.sqrt(CONSTANT_CHANNEL_DOMINANCE ** 2 + 1);
}

/** Output-dimension-0 weight of each token: its bias over h[0], 0 for tokens without one. */
export function outputChannelWeights(
  shape: ChannelShape,
  tokens: readonly string[],
  logitBias: Readonly<Record<string, number>>,
): Float32Array {
  const weights = new Float32Array(tokens.length);
  const afterNorm = constantChannelAfterNorm(shape);
  for (const [piece, bias] of Object.entries(logitBias)) {
    const token = tokens.indexOf(piece);
    if (token < 0) throw new Error(`logitBias: ${JSON.stringify(piece)} is not a piece of the vocabulary`);
    weights[token] = bias / afterNorm;
  }
  return weights;
}

/** Turns the random fill of `tensor` into its constant-channel version (see constantChannel). */
export function constantChannelFill(
  tensor: { name: string; shape: readonly number[] },
  fill: (chunk: Float32Array) => void,
  channel: number,
  outputWeights: Float32Array,
): (chunk: Float32Array) => void {
  const rowLength = tensor.shape[0] ?? 1;
  if (tensor.name === 'token_embd.weight')
    return patchedFill(fill, (chunk, offset) => setFirstOfEachRow(chunk, offset, rowLength, () => channel));
  if (tensor.name === 'output.weight')
    return patchedFill(fill, (chunk, offset) =>
      setFirstOfEachRow(chunk, offset, rowLength, (token) => outputWeights[token] ?? 0),
    );
  if (/\.(attn_output|ffn_down)\.weight$/.test(tensor.name))
    return patchedFill(fill, (chunk, offset) => zeroFirstRow(chunk, offset, rowLength));
  return fill;
}

/** Wraps `fill` with `patch`, which sees each chunk with the chunk's element offset within the tensor. */
function patchedFill(
  fill: (chunk: Float32Array) => void,
  patch: (chunk: Float32Array, offset: number) => void,
): (chunk: Float32Array) => void {
  let offset = 0;
  return (chunk) => {
    fill(chunk);
    patch(chunk, offset);
    offset += chunk.length;
  };
}

/** Sets element 0 of each ggml row (ne0 = rowLength elements) in the chunk to value(row). */
function setFirstOfEachRow(
  chunk: Float32Array,
  offset: number,
  rowLength: number,
  value: (row: number) => number,
): void {
  for (let index = (rowLength - (offset % rowLength)) % rowLength; index < chunk.length; index += rowLength) {
    chunk[index] = value((offset + index) / rowLength);
  }
}

/** Sets the whole ggml row 0 (the first rowLength elements of the tensor) to zero. */
function zeroFirstRow(chunk: Float32Array, offset: number, rowLength: number): void {
  if (offset < rowLength) chunk.fill(0, 0, Math.min(chunk.length, rowLength - offset));
}
