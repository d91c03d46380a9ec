import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundledUseEmbedder } from '../../src/embeddings/bundled-use-embedder.js';
import {
  type KernelFunc,
  MIN_MACS_PER_ENTRY,
  type TensorInfo,
  type TfKernelRegistry,
  type WasmBackend,
  batchedMatMulKernel,
} from '../../src/embeddings/wasm-batched-matmul.js';

interface Tf extends TfKernelRegistry {
  tensor(values: Float32Array, shape: number[]): TensorInfo & { dispose(): void };
  backend(): WasmBackend & { readSync(dataId: object): Float32Array; numDataIds(): number };
  getBackend(): string;
}

/** Plain float64 product of [batch..., rows, inner] × [batch..., inner, columns], transposes applied. */
function reference(a: Float32Array, aShape: number[], b: Float32Array, bShape: number[], transposeA: boolean, transposeB: boolean): Float64Array {
  const r = aShape.length;
  const batch = aShape.slice(0, -2).reduce((x, y) => x * y, 1);
  const [a0, a1] = [aShape[r - 2]!, aShape[r - 1]!];
  const [b0, b1] = [bShape[r - 2]!, bShape[r - 1]!];
  const rows = transposeA ? a1 : a0;
  const inner = transposeA ? a0 : a1;
  const columns = transposeB ? b0 : b1;
  const out = new Float64Array(batch * rows * columns);
  for (let n = 0; n < batch; n++)
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < columns; j++) {
        let sum = 0;
        for (let k = 0; k < inner; k++) {
          const x = a[n * a0 * a1 + (transposeA ? k * a1 + i : i * a1 + k)]!;
          const y = b[n * b0 * b1 + (transposeB ? j * b1 + k : k * b1 + j)]!;
          sum += x * y;
        }
        out[(n * rows + i) * columns + j] = sum;
      }
  return out;
}

function randomValues(size: number, seed: number): Float32Array {
  let state = seed;
  return Float32Array.from({ length: size }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648 - 0.5;
  });
}

describe('the wasm backend BatchMatMul through XNNPACK', () => {
  let embedder: BundledUseEmbedder;
  let tf: Tf;
  let installed: KernelFunc;
  let failOnCall = 0;
  const calls: { a: number[]; b: number[]; transposeA: unknown; transposeB: unknown }[] = [];
  let kernel: KernelFunc;

  beforeAll(async () => {
    // Loading the model sets the wasm backend up and installs the kernel.
    embedder = await BundledUseEmbedder.load();
    tf = (await import('@energetic-ai/core')) as unknown as Tf;
    expect(tf.getBackend()).toBe('wasm');
    // The installed kernel hands a batch of one without transposes to the backend's own, untouched.
    installed = tf.getKernel('BatchMatMul', 'wasm')!.kernelFunc;
    const spied: KernelFunc = (args) => {
      calls.push({ a: args.inputs.a!.shape, b: args.inputs.b!.shape, transposeA: args.attrs.transposeA, transposeB: args.attrs.transposeB });
      if (calls.length === failOnCall) throw new Error('the backend ran out of memory');
      return installed(args);
    };
    kernel = batchedMatMulKernel({
      batchMatMul: spied,
      transpose: tf.getKernel('Transpose', 'wasm')!.kernelFunc,
      reshape: tf.getKernel('Reshape', 'wasm')!.kernelFunc,
    });
  }, 60_000);
  afterAll(async () => {
    await embedder?.close();
  });

  function run(aShape: number[], bShape: number[], transposeA: boolean, transposeB: boolean) {
    const size = (s: number[]) => s.reduce((x, y) => x * y, 1);
    const aValues = randomValues(size(aShape), 7);
    const bValues = randomValues(size(bShape), 11);
    const backend = tf.backend();
    const before = backend.numDataIds();
    const a = tf.tensor(aValues, aShape);
    const b = tf.tensor(bValues, bShape);
    calls.length = 0;
    const out = kernel({ inputs: { a, b }, backend, attrs: { transposeA, transposeB } });
    const values = backend.readSync(out.dataId);
    backend.disposeData(out.dataId);
    a.dispose();
    b.dispose();
    // Counted once the inputs are gone too: a reshape of them only adds a reference.
    const leaked = backend.numDataIds() - before;
    const expected = reference(aValues, aShape, bValues, bShape, transposeA, transposeB);
    const maxDiff = expected.reduce((m, e, i) => Math.max(m, Math.abs(e - values[i]!)), 0);
    return { out, values, expected, maxDiff, leaked };
  }

  it('multiplies attention-shaped products (keys transposed) one batch entry at a time', () => {
    const { out, maxDiff, leaked, expected } = run([2, 4, 40, 64], [2, 4, 40, 64], false, true);
    expect(out.shape).toEqual([2, 4, 40, 40]);
    expect(expected.length).toBe(2 * 4 * 40 * 40);
    expect(maxDiff).toBeLessThan(1e-4);
    expect(leaked).toBe(0);
    expect(calls).toHaveLength(8);
    for (const call of calls) expect(call).toEqual({ a: [1, 40, 64], b: [1, 64, 40], transposeA: false, transposeB: false });
  });

  it('takes a transposed left side and plain batches too', () => {
    const left = run([3, 64, 40], [3, 64, 50], true, false);
    expect(left.out.shape).toEqual([3, 40, 50]);
    expect(left.maxDiff).toBeLessThan(1e-4);
    expect(left.leaked).toBe(0);
    expect(calls).toHaveLength(3);
    const plain = run([5, 40, 64], [5, 64, 40], false, false);
    expect(plain.out.shape).toEqual([5, 40, 40]);
    expect(plain.maxDiff).toBeLessThan(1e-4);
    expect(plain.leaked).toBe(0);
    expect(calls).toHaveLength(5);
  });

  it('frees every tensor it made when an entry fails, and lets the error through', () => {
    const backend = tf.backend();
    const before = backend.numDataIds();
    const a = tf.tensor(randomValues(4 * 40 * 64, 3), [4, 40, 64]);
    const b = tf.tensor(randomValues(4 * 40 * 64, 5), [4, 40, 64]);
    calls.length = 0;
    failOnCall = 3;
    try {
      expect(() => kernel({ inputs: { a, b }, backend, attrs: { transposeA: false, transposeB: true } })).toThrow('ran out of memory');
    } finally {
      failOnCall = 0;
      a.dispose();
      b.dispose();
    }
    expect(calls).toHaveLength(3);
    expect(backend.numDataIds()).toBe(before);
  });

  it('leaves products whose inner sizes differ to the original kernel, which refuses them', () => {
    const a = tf.tensor(randomValues(2 * 40 * 64, 3), [2, 40, 64]);
    const b = tf.tensor(randomValues(2 * 60 * 40, 5), [2, 60, 40]);
    calls.length = 0;
    try {
      expect(() => kernel({ inputs: { a, b }, backend: tf.backend(), attrs: { transposeA: false, transposeB: false } })).toThrow(/inner shapes/);
      expect(calls).toEqual([{ a: [2, 40, 64], b: [2, 60, 40], transposeA: false, transposeB: false }]);
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  it('leaves small and broadcast products to the original kernel, as they are', () => {
    expect(7 * 64 * 7).toBeLessThan(MIN_MACS_PER_ENTRY);
    const small = run([4, 7, 64], [4, 7, 64], false, true);
    expect(small.maxDiff).toBeLessThan(1e-4);
    expect(calls).toEqual([{ a: [4, 7, 64], b: [4, 7, 64], transposeA: false, transposeB: true }]);
    const broadcast = run([1, 40, 64], [3, 64, 40], false, false);
    expect(broadcast.out.shape).toEqual([3, 40, 40]);
    expect(calls).toEqual([{ a: [1, 40, 64], b: [3, 64, 40], transposeA: false, transposeB: false }]);
  });

  it('is the kernel the model runs once it is loaded', () => {
    expect(installed.name).toBe('batchedMatMulThroughXnnpack');
  });
});
