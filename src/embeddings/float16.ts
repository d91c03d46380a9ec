/**
 * IEEE 754 half precision, for weight files: Node 20 has no Float16Array. Rounds to nearest
 * (ties to even); values past the half range become ±Infinity, which a weights writer refuses.
 */
const scratch = new DataView(new ArrayBuffer(4));

export function toFloat16Bits(value: number): number {
  scratch.setFloat32(0, value);
  const bits = scratch.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal half (or zero): the implicit bit joins the mantissa, shifted into place.
    if (halfExponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    return sign | roundShift(full, shift);
  }
  // A carry out of the mantissa rounds correctly into the exponent field.
  return (sign | ((halfExponent << 10) + roundShift(mantissa, 13))) & 0xffff;
}

function roundShift(value: number, shift: number): number {
  const half = 1 << (shift - 1);
  const rest = value & ((1 << shift) - 1);
  let out = value >>> shift;
  if (rest > half || (rest === half && out & 1)) out += 1;
  return out;
}

export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}
