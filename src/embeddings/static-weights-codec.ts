import { fromFloat16Bits, toFloat16Bits } from './float16.js';
import { type StaticQuantization, weightsByteLength } from './static-model-format.js';

/**
 * Quantised rows of a static model, little-endian. `int8-row-scale`: every row's float32 scale
 * (its largest magnitude / 127), then the rows as int8; `float16`: the rows as half floats.
 */
export function encodeWeights(rows: Float32Array, dimensions: number, quantization: StaticQuantization): Buffer {
  const count = rows.length / dimensions;
  const out = Buffer.alloc(weightsByteLength(quantization, count, dimensions));
  if (quantization === 'float16') {
    for (let i = 0; i < rows.length; i++) {
      const bits = toFloat16Bits(rows[i]!);
      if ((bits & 0x7c00) === 0x7c00) throw new RangeError(`weight ${rows[i]} does not fit a half float`);
      out.writeUInt16LE(bits, i * 2);
    }
    return out;
  }
  for (let r = 0; r < count; r++) {
    let largest = 0;
    for (let d = 0; d < dimensions; d++) largest = Math.max(largest, Math.abs(rows[r * dimensions + d]!));
    const scale = largest / 127;
    out.writeFloatLE(scale, r * 4);
    for (let d = 0; d < dimensions; d++) {
      out.writeInt8(scale > 0 ? Math.round(rows[r * dimensions + d]! / scale) : 0, count * 4 + r * dimensions + d);
    }
  }
  return out;
}

export function decodeWeights(bytes: Uint8Array, rows: number, dimensions: number, quantization: StaticQuantization): Float32Array {
  const expected = weightsByteLength(quantization, rows, dimensions);
  if (bytes.length !== expected) throw new RangeError(`holds ${bytes.length} bytes, expected ${expected}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(rows * dimensions);
  if (quantization === 'float16') {
    for (let i = 0; i < out.length; i++) out[i] = fromFloat16Bits(view.getUint16(i * 2, true));
    return out;
  }
  for (let r = 0; r < rows; r++) {
    const scale = view.getFloat32(r * 4, true);
    for (let d = 0; d < dimensions; d++) out[r * dimensions + d] = view.getInt8(rows * 4 + r * dimensions + d) * scale;
  }
  return out;
}
