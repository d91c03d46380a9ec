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

/**
 * Rows of a static model as the runtime keeps them: row r is `values[r·d … (r+1)·d) × scales[r]`.
 * An int8 file's values are a view of its bytes (a quarter of the memory of float32 rows); a
 * float16 file's are decoded, each row's scale 1.
 */
export interface WeightRows {
  values: Int8Array | Float32Array;
  scales: Float32Array;
}

export function decodeWeightRows(bytes: Uint8Array, rows: number, dimensions: number, quantization: StaticQuantization): WeightRows {
  const expected = weightsByteLength(quantization, rows, dimensions);
  if (bytes.length !== expected) throw new RangeError(`holds ${bytes.length} bytes, expected ${expected}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (quantization === 'float16') {
    const values = new Float32Array(rows * dimensions);
    for (let i = 0; i < values.length; i++) values[i] = fromFloat16Bits(view.getUint16(i * 2, true));
    return { values, scales: new Float32Array(rows).fill(1) };
  }
  const scales = new Float32Array(rows);
  for (let r = 0; r < rows; r++) scales[r] = view.getFloat32(r * 4, true);
  return { values: new Int8Array(bytes.buffer, bytes.byteOffset + rows * 4, rows * dimensions), scales };
}

/** Float rows (scale 1 each), as a model in training has them. */
export function unscaledRows(values: Float32Array, dimensions: number): WeightRows {
  return { values, scales: new Float32Array(values.length / dimensions).fill(1) };
}

/** The rows as float32, each times its scale. */
export function dequantizeRows({ values, scales }: WeightRows, dimensions: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let r = 0; r < scales.length; r++) {
    for (let d = 0; d < dimensions; d++) out[r * dimensions + d] = values[r * dimensions + d]! * scales[r]!;
  }
  return out;
}

export function decodeWeights(bytes: Uint8Array, rows: number, dimensions: number, quantization: StaticQuantization): Float32Array {
  return dequantizeRows(decodeWeightRows(bytes, rows, dimensions, quantization), dimensions);
}
