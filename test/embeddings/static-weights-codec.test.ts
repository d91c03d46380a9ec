import { describe, expect, it } from 'vitest';
import { fromFloat16Bits, toFloat16Bits } from '../../src/embeddings/float16.js';
import { decodeWeightRows, decodeWeights, encodeWeights } from '../../src/embeddings/static-weights-codec.js';
import { seededRandom } from '../../scripts/lib/static-embedder/seeded-random.js';

const randomRows = (rows: number, d: number, seed: number) => {
  const random = seededRandom(seed);
  return Float32Array.from({ length: rows * d }, () => (random() - 0.5) * 0.2);
};

describe('static weights codec', () => {
  it('converts half floats exactly where they are representable and rounds to nearest elsewhere', () => {
    for (const x of [0, 1, -1, 0.5, 2, 65504, -(2 ** -14), 2 ** -24, 2 ** -20]) expect(fromFloat16Bits(toFloat16Bits(x))).toBe(x);
    expect(toFloat16Bits(1)).toBe(0x3c00);
    expect(toFloat16Bits(-2)).toBe(0xc000);
    expect(toFloat16Bits(1e6)).toBe(0x7c00);
    // 1 + 2⁻¹¹ lies halfway between 1 and 1 + 2⁻¹⁰: ties go to the even mantissa.
    expect(fromFloat16Bits(toFloat16Bits(1 + 2 ** -11))).toBe(1);
    expect(fromFloat16Bits(toFloat16Bits(0.1))).toBeCloseTo(0.1, 4);
  });

  it('round-trips float16 rows within half precision and int8 rows within half a step of their scale', () => {
    const d = 16;
    const rows = randomRows(10, d, 7);
    const half = decodeWeights(encodeWeights(rows, d, 'float16'), 10, d, 'float16');
    const int8 = decodeWeights(encodeWeights(rows, d, 'int8-row-scale'), 10, d, 'int8-row-scale');
    for (let r = 0; r < 10; r++) {
      const scale = Math.max(...rows.subarray(r * d, (r + 1) * d).map(Math.abs)) / 127;
      for (let j = 0; j < d; j++) {
        const x = rows[r * d + j]!;
        expect(Math.abs(half[r * d + j]! - x)).toBeLessThanOrEqual(Math.abs(x) * 2 ** -11 + 1e-9);
        expect(Math.abs(int8[r * d + j]! - x)).toBeLessThanOrEqual(scale / 2 + 1e-9);
      }
    }
    expect(encodeWeights(rows, d, 'int8-row-scale')).toHaveLength(10 * 4 + 10 * d);
  });

  it('keeps a zero row zero and refuses a file of the wrong size', () => {
    const rows = new Float32Array(8);
    expect([...decodeWeights(encodeWeights(rows, 4, 'int8-row-scale'), 2, 4, 'int8-row-scale')]).toEqual(new Array(8).fill(0));
    expect(() => decodeWeights(new Uint8Array(7), 2, 4, 'int8-row-scale')).toThrow('holds 7 bytes, expected 16');
    expect(() => encodeWeights(Float32Array.from([1e6]), 1, 'float16')).toThrow('does not fit a half float');
  });

  it('keeps an int8 file as int8 rows, a view of its bytes, with a float scale per row', () => {
    const d = 16;
    const rows = randomRows(10, d, 11);
    const bytes = encodeWeights(rows, d, 'int8-row-scale');
    const kept = decodeWeightRows(bytes, 10, d, 'int8-row-scale');
    expect(kept.values).toBeInstanceOf(Int8Array);
    expect(kept.values.buffer).toBe(bytes.buffer);
    const float = decodeWeights(bytes, 10, d, 'int8-row-scale');
    for (let i = 0; i < float.length; i++) expect(kept.values[i]! * kept.scales[Math.floor(i / d)]!).toBeCloseTo(float[i]!, 7);
    const half = decodeWeightRows(encodeWeights(rows, d, 'float16'), 10, d, 'float16');
    expect(half.values).toBeInstanceOf(Float32Array);
    expect([...half.scales]).toEqual(new Array(10).fill(1));
  });
});
