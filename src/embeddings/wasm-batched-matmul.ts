/**
 * TF.js's wasm backend multiplies through XNNPACK only when neither side is transposed and the
 * batch is 1; anything else — the attention products of USE lite, [texts, heads, tokens, 64] —
 * falls to a scalar loop that runs about a tenth as fast (measured: 1.5 against 19 GMAC/s). This
 * kernel cuts such a product into one XNNPACK product per batch entry. The wasm backend's own
 * kernels do the cutting, so the tensors stay in its heap and its bookkeeping.
 */

// The few pieces of TF.js's kernel API used here, typed locally (see bundled-use-embedder.ts).
export interface TensorInfo {
  dataId: object;
  shape: number[];
  dtype: string;
}
export interface WasmBackend {
  makeOutput(shape: number[], dtype: string): TensorInfo;
  typedArrayFromHeap(info: TensorInfo): Float32Array;
  disposeData(dataId: object): boolean;
}
export interface KernelArgs {
  inputs: Record<string, TensorInfo>;
  backend: WasmBackend;
  attrs: Record<string, unknown>;
}
export type KernelFunc = (args: KernelArgs) => TensorInfo;
interface KernelConfig {
  kernelName: string;
  backendName: string;
  kernelFunc: KernelFunc;
  setupFunc?: (backend: unknown) => void;
}
export interface TfKernelRegistry {
  getKernel(kernelName: string, backendName: string): KernelConfig | undefined;
  unregisterKernel(kernelName: string, backendName: string): void;
  registerKernel(config: KernelConfig): void;
}

/**
 * Below this many multiply-adds per batch entry, the per-entry cost of an XNNPACK operator (it
 * packs the right side each time) outweighs its speed: a short query's attention (7 tokens, 3k
 * per entry) runs faster in the scalar loop.
 */
export const MIN_MACS_PER_ENTRY = 32_768;

const KERNEL = 'BatchMatMul';
const BACKEND = 'wasm';
const installed = new WeakSet<TfKernelRegistry>();

/** Replaces the wasm backend's BatchMatMul kernel; a second call on the same registry does nothing. */
export function installWasmBatchedMatMul(tf: TfKernelRegistry): void {
  if (installed.has(tf)) return;
  const original = tf.getKernel(KERNEL, BACKEND);
  const transpose = tf.getKernel('Transpose', BACKEND)?.kernelFunc;
  const reshape = tf.getKernel('Reshape', BACKEND)?.kernelFunc;
  if (!original || !transpose || !reshape) throw new Error('the wasm backend has no BatchMatMul, Transpose or Reshape kernel');
  tf.unregisterKernel(KERNEL, BACKEND);
  tf.registerKernel({ ...original, kernelFunc: batchedMatMulKernel({ batchMatMul: original.kernelFunc, transpose, reshape }) });
  installed.add(tf);
}

/** The wasm backend's kernels this one is made of: `batchMatMul` is its original BatchMatMul. */
export interface WasmKernels {
  batchMatMul: KernelFunc;
  transpose: KernelFunc;
  reshape: KernelFunc;
}

export function batchedMatMulKernel(kernels: WasmKernels): KernelFunc {
  return function batchedMatMulThroughXnnpack(args) {
    return batchedMatMul(args, kernels);
  };
}

function batchedMatMul(args: KernelArgs, { batchMatMul: original, transpose, reshape }: WasmKernels): TensorInfo {
  const { backend } = args;
  const { a, b } = args.inputs as { a: TensorInfo; b: TensorInfo };
  const transposeA = args.attrs.transposeA === true;
  const transposeB = args.attrs.transposeB === true;
  const rank = a.shape.length;
  // Whatever this kernel does not cut — broadcast batches, mismatched shapes (the original
  // reports them), a batch of one the original already gives XNNPACK — is left as it was.
  if (a.dtype !== 'float32' || b.dtype !== 'float32' || b.shape.length !== rank || rank < 3) return original(args);
  const batchDims = a.shape.slice(0, -2);
  if (batchDims.some((d, i) => d !== b.shape[i])) return original(args);
  const batch = batchDims.reduce((x, y) => x * y, 1);
  const rows = transposeA ? a.shape[rank - 1]! : a.shape[rank - 2]!;
  const inner = transposeA ? a.shape[rank - 2]! : a.shape[rank - 1]!;
  const innerOfB = transposeB ? b.shape[rank - 1]! : b.shape[rank - 2]!;
  const columns = transposeB ? b.shape[rank - 2]! : b.shape[rank - 1]!;
  if (inner !== innerOfB) return original(args);
  if (batch < 2 && !transposeA && !transposeB) return original(args);
  if (rows * inner * columns < MIN_MACS_PER_ENTRY) return original(args);

  const made: TensorInfo[] = [];
  try {
    // XNNPACK takes its right side as [inner, columns], untransposed: each side is laid out so.
    const as3d = (x: TensorInfo, swap: boolean): TensorInfo => {
      const last = x.shape.slice(-2);
      const flat = reshape({ inputs: { x }, backend, attrs: { shape: [batch, last[0]!, last[1]!] } });
      made.push(flat);
      if (!swap) return flat;
      const swapped = transpose({ inputs: { x: flat }, backend, attrs: { perm: [0, 2, 1] } });
      made.push(swapped);
      return swapped;
    };
    const left = as3d(a, transposeA);
    const right = as3d(b, transposeB);
    const out = backend.makeOutput([...batchDims, rows, columns], 'float32');
    // Disposed with the intermediates should an entry fail; handed to the caller otherwise.
    made.push(out);
    const leftSize = rows * inner;
    const rightSize = inner * columns;
    const outSize = rows * columns;
    for (let i = 0; i < batch; i++) {
      // Fresh tensors for every entry: XNNPACK caches its packed right side by tensor id, and
      // disposing the tensor is what frees that cache entry. Heap views are taken anew each time:
      // making a tensor can grow the heap, which detaches older views.
      const ai = backend.makeOutput([1, rows, inner], 'float32');
      const bi = backend.makeOutput([1, inner, columns], 'float32');
      let product: TensorInfo | undefined;
      try {
        backend.typedArrayFromHeap(ai).set(backend.typedArrayFromHeap(left).subarray(i * leftSize, (i + 1) * leftSize));
        backend.typedArrayFromHeap(bi).set(backend.typedArrayFromHeap(right).subarray(i * rightSize, (i + 1) * rightSize));
        product = original({ inputs: { a: ai, b: bi }, backend, attrs: { ...args.attrs, transposeA: false, transposeB: false } });
        backend.typedArrayFromHeap(out).set(backend.typedArrayFromHeap(product), i * outSize);
      } finally {
        if (product) backend.disposeData(product.dataId);
        backend.disposeData(ai.dataId);
        backend.disposeData(bi.dataId);
      }
    }
    made.pop();
    return out;
  } finally {
    for (const t of made) backend.disposeData(t.dataId);
  }
}
