// Deterministic pseudo-random weights: the same seed gives the same bytes on every machine, so model
// files can be cached by a hash of their options and compared byte for byte.

/** mulberry32: a tiny, fast 32-bit PRNG; plenty for random weights. Returns 32 random bits as an int32. */
export function mulberry32(seed: number): () => number {
  // `| 0` rather than `>>> 0` keeps every intermediate a small integer V8 does not box as a double.
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return mixed ^ (mixed >>> 14);
  };
}

/** Mixes a tensor's index into the model seed so each tensor has its own independent stream. */
export function tensorSeed(seed: number, tensorIndex: number): number {
  return (seed ^ Math.imul(tensorIndex + 1, 0x9e3779b9)) | 0;
}

// The two 16-bit halves of one random word, summed and centred, are triangular on (-1, 1) with
// variance 2 * 1/12: normal enough for weights, one PRNG step per value (the writer's hot loop).
const TRIANGULAR_STANDARD_DEVIATION = Math.sqrt(1 / 6);

/** A `fill` callback giving values of mean 0 and the given standard deviation. */
export function randomFill(seed: number, standardDeviation: number): (chunk: Float32Array) => void {
  const next = mulberry32(seed);
  const scale = standardDeviation / TRIANGULAR_STANDARD_DEVIATION / 65536;
  return (chunk) => {
    for (let index = 0; index < chunk.length; index++) {
      const bits = next();
      chunk[index] = ((bits & 0xffff) + (bits >>> 16) - 65535) * scale;
    }
  };
}

/** A `fill` callback for normalization weights, which start at one in a freshly initialised model. */
export function constantFill(value: number): (chunk: Float32Array) => void {
  return (chunk) => {
    chunk.fill(value);
  };
}
