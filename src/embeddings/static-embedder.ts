import type { Embedder } from './embedder.js';
import { DEFAULT_STATIC_MODEL_DIR, type StaticModel, readStaticModel } from './static-model-files.js';
import { type UseLiteTokenizer, loadUseLiteTokenizer } from './use-lite-tokenizer.js';

/**
 * Characters read per token of the input limit: no USE lite piece is longer than 16 characters, so
 * the first maxInputTokens tokens lie within them and text of any length costs bounded time.
 */
export const STATIC_CHARACTERS_PER_TOKEN = 16;

export interface StaticEmbedderOptions {
  /** The model's folder; default models/static-use-lite. */
  directory?: string;
}

/**
 * A static embedding model distilled from USE lite (scripts/train-static-embedder.ts): a text's
 * vector is the weighted mean of its tokens' vectors, normalised, computed in the calling thread
 * (a table lookup and a few additions a token, no worker pool). Tokens come from USE lite's own
 * tokenizer; the first `maxInputTokens` count (128 for the distilled model, the
 * bundled model's window, so documents chunk alike under both), the rest of the text is not read.
 *
 * Text with no token the model knows (empty, punctuation alone, unknown symbols) gets the model's
 * fallback vector: a fixed unit vector (the teacher's vector of empty text) rather than zeros,
 * since pgvector's cosine distance to a zero vector is NaN, which would poison a ranking.
 */
export class StaticEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly maxInputTokens: number;
  /** Row of each token id (-1: unknown), into `values`. */
  private readonly rowOf: Int32Array;
  /** The rows as stored (int8 for a bundled model): kept, not expanded to float32, which took 4x the memory. */
  private readonly values: Int8Array | Float32Array;
  /**
   * Each known token's row scale times its weight in the mean: the mean is normalised anyway, so its
   * divisor is not needed.
   */
  private readonly coefficients: Float64Array;
  private readonly fallback: readonly number[];
  private closed = false;

  constructor(
    model: StaticModel,
    private readonly tokenizer: UseLiteTokenizer,
  ) {
    const { manifest, table, rows } = model;
    this.id = manifest.modelId;
    this.dimensions = manifest.dimensions;
    this.maxInputTokens = manifest.maxInputTokens;
    const d = this.dimensions;
    this.rowOf = new Int32Array(Math.max(0, ...table.ids) + 1).fill(-1);
    this.values = rows.values;
    this.coefficients = new Float64Array(table.ids.length);
    table.ids.forEach((id, row) => {
      const weight = table.weights[row]!;
      // A token of weight zero does not count: it is as unknown to the model as one not listed.
      if (!(weight > 0)) return;
      this.rowOf[id] = row;
      this.coefficients[row] = rows.scales[row]! * weight;
    });
    // A row's scale is positive, so the stored values point the fallback's way.
    const fallback = normalized(rows.values.subarray(table.ids.length * d, (table.ids.length + 1) * d));
    if (!fallback) throw new RangeError(`${manifest.modelId}: the fallback vector is zero`);
    this.fallback = fallback;
  }

  static async load(options: StaticEmbedderOptions = {}): Promise<StaticEmbedder> {
    const [model, tokenizer] = await Promise.all([readStaticModel(options.directory ?? DEFAULT_STATIC_MODEL_DIR), loadUseLiteTokenizer()]);
    return new StaticEmbedder(model, tokenizer);
  }

  countTokens(text: string): number {
    return this.tokenizer.countTokens(text);
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    if (this.closed) throw new Error('StaticEmbedder is closed');
    options.signal?.throwIfAborted();
    return texts.map((text) => this.embedOne(text));
  }

  embedOne(text: string): number[] {
    const limit = this.maxInputTokens * STATIC_CHARACTERS_PER_TOKEN;
    const tokens = this.tokenizer.encode(text.length > limit ? text.slice(0, limit) : text);
    const d = this.dimensions;
    const sum = new Float64Array(d);
    const count = Math.min(tokens.length, this.maxInputTokens);
    for (let i = 0; i < count; i++) {
      const id = tokens[i]!;
      const row = id < this.rowOf.length ? this.rowOf[id]! : -1;
      if (row < 0) continue;
      const offset = row * d;
      const coefficient = this.coefficients[row]!;
      for (let j = 0; j < d; j++) sum[j]! += coefficient * this.values[offset + j]!;
    }
    return normalized(sum) ?? [...this.fallback];
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** The unit vector along `v`, or undefined when it has no direction. */
function normalized(v: ArrayLike<number>): number[] | undefined {
  let sumOfSquares = 0;
  for (let i = 0; i < v.length; i++) sumOfSquares += v[i]! * v[i]!;
  const norm = Math.sqrt(sumOfSquares);
  if (!(norm > 1e-12) || !Number.isFinite(norm)) return undefined;
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

export function createStaticEmbedder(options: StaticEmbedderOptions = {}): Promise<StaticEmbedder> {
  return StaticEmbedder.load(options);
}
