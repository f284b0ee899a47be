// IEEE 754 binary32 -> binary16 conversion, rounding to nearest even like numpy and ggml do,
// so F16 tensors written here hold the same bits a real converter would produce.

const scratchFloat = new Float32Array(1);
const scratchBits = new Uint32Array(scratchFloat.buffer);

/** The float16 bit pattern nearest to `value`. */
export function float32ToFloat16(value: number): number {
  scratchFloat[0] = value;
  return float32BitsToFloat16Bits(scratchBits[0] ?? 0);
}

/** Converts a whole chunk, reading the source's bits through a view. */
export function float32ArrayToFloat16(source: Float32Array, target: Uint16Array): void {
  // Int32 rather than Uint32: negative floats would read as uint32 values above 2^31, which V8 boxes as doubles.
  const bits = new Int32Array(source.buffer, source.byteOffset, source.length);
  for (let index = 0; index < bits.length; index++) {
    target[index] = float32BitsToFloat16Bits(bits[index] ?? 0);
  }
}

/** Rounds `kept` up when the dropped low `shift` bits are over half, or exactly half with `kept` odd. */
function roundHalfToEven(kept: number, dropped: number, shift: number): number {
  const halfway = 1 << (shift - 1);
  return dropped > halfway || (dropped === halfway && (kept & 1) === 1) ? kept + 1 : kept;
}

export function float32BitsToFloat16Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  if (exponent >= 113 && exponent <= 142) {
    // Float16-normal range, where nearly every weight falls: rebias the exponent and drop 13 mantissa bits.
    // Adding 0xfff plus the lowest kept bit rounds half to even; a carry into the exponent is right too.
    return sign | (((bits & 0x7fffffff) - (112 << 23) + 0xfff + ((bits >>> 13) & 1)) >>> 13);
  }
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa === 0 ? 0 : 0x200);
  if (exponent > 142) return sign | 0x7c00;
  return sign | subnormalHalf(exponent, mantissa);
}

/** Values below float16's smallest normal become multiples of 2^-24; the implicit leading 1 is made explicit. */
function subnormalHalf(exponent: number, mantissa: number): number {
  const shift = 126 - exponent;
  if (shift > 24) return 0;
  const full = mantissa | 0x800000;
  return roundHalfToEven(full >>> shift, full & ((1 << shift) - 1), shift);
}
