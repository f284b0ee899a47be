/**
 * What one core can move to and from memory, measured STREAM-style in the same run as the
 * generation numbers: llama.cpp runs with threads: 1, and these copies run on one thread too.
 */

export interface MemoryBandwidth {
  /** STREAM "copy" convention: bytes read plus bytes written, per second (memmove via Buffer.copy). */
  copyBytesPerSecond: number;
  /** Both buffers read, nothing written, per second (memcmp via Buffer.compare of equal buffers). */
  readBytesPerSecond: number;
  bufferBytes: number;
  repetitions: number;
}

/** Buffers far larger than the last-level cache, so every pass goes to DRAM. */
const BUFFER_BYTES = 512 * 1024 * 1024;
const REPETITIONS = 5;

/**
 * Filled, not just allocated: zero-filled memory can be mapped to one shared zero page, and reads
 * of that would never leave the cache.
 */
function touchedBuffer(bytes: number): Buffer {
  return Buffer.allocUnsafe(bytes).fill(0x5a);
}

function bestRate(bytesPerPass: number, repetitions: number, pass: () => void): number {
  let bestMilliseconds = Number.POSITIVE_INFINITY;
  for (let repetition = 0; repetition < repetitions; repetition += 1) {
    const started = performance.now();
    pass();
    bestMilliseconds = Math.min(bestMilliseconds, performance.now() - started);
  }
  return bytesPerPass / (bestMilliseconds / 1000);
}

export function measureMemoryBandwidth(bufferBytes = BUFFER_BYTES, repetitions = REPETITIONS): MemoryBandwidth {
  const source = touchedBuffer(bufferBytes);
  const target = touchedBuffer(bufferBytes);
  const copyBytesPerSecond = bestRate(2 * bufferBytes, repetitions, () => source.copy(target));
  const readBytesPerSecond = bestRate(2 * bufferBytes, repetitions, () => {
    // Equal contents: memcmp has to read both buffers to the end.
    if (Buffer.compare(source, target) !== 0) throw new Error('bandwidth buffers differ');
  });
  return { copyBytesPerSecond, readBytesPerSecond, bufferBytes, repetitions };
}
