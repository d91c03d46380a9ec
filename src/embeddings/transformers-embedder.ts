import { mean_pooling, pipeline, type Tensor } from '@huggingface/transformers';
import type { Embedder } from './embedder.js';
import { l2Normalize } from './l2-normalize.js';
import { splitIntoBatches } from './split-into-batches.js';
import { type TransformersModelSource, detectMaxInputTokens, loadFromSource, sourceName } from './transformers-loading.js';

export interface TransformersEmbedderOptions extends TransformersModelSource {
  /** Texts per model call. Default 32. */
  batchSize?: number;
  /** 'mean' (sentence-transformers default) or 'cls' (e.g. the BGE family). Default 'mean'. */
  pooling?: 'mean' | 'cls';
  /** ONNX weight variant, e.g. 'fp32' or 'q8' (picks onnx/model.onnx or onnx/model_quantized.onnx). */
  dtype?: 'auto' | 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4';
  /** onnxruntime intra-op threads; the pool sets 1 per worker so workers do not fight over cores. */
  threads?: number;
}

interface BatchEncoding {
  input_ids: Tensor;
  attention_mask: Tensor;
  [name: string]: Tensor;
}
interface FeatureExtractor {
  tokenizer: {
    model_max_length: unknown;
    encode(text: string): number[];
    (texts: string[], options: { padding: boolean; truncation: boolean; max_length: number }): BatchEncoding;
  };
  model: {
    config: { max_position_embeddings?: unknown };
    (inputs: BatchEncoding): Promise<Record<string, Tensor | undefined>>;
  };
  dispose(): Promise<void>;
}

/**
 * Sentence embeddings from any transformers.js feature-extraction model (ONNX, run by
 * onnxruntime-node): token vectors are pooled, truncated to the model's limit, and normalised.
 */
export class TransformersEmbedder implements Embedder {
  private closed = false;

  private constructor(
    readonly id: string,
    readonly dimensions: number,
    readonly maxInputTokens: number,
    private readonly extractor: FeatureExtractor,
    private readonly batchSize: number,
    private readonly pooling: 'mean' | 'cls',
  ) {}

  static async load(options: TransformersEmbedderOptions): Promise<TransformersEmbedder> {
    const extractor = await loadExtractor(options);

    const maxInputTokens = detectMaxInputTokens(extractor.tokenizer, extractor.model.config);
    const pooling = options.pooling ?? 'mean';
    try {
      // Configs disagree on where the width lives (hidden_size, d_model, dim...); the output does not.
      const [probe] = await embedBatch(extractor, ['dimension probe'], maxInputTokens, pooling);
      return new TransformersEmbedder(`transformers:${sourceName(options)}`, probe!.length, maxInputTokens, extractor, options.batchSize ?? 32, pooling);
    } catch (error) {
      await extractor.dispose();
      throw error;
    }
  }

  /** With the special tokens, which count against `maxInputTokens` too. */
  countTokens(text: string): number {
    return this.extractor.tokenizer.encode(text).length;
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    if (this.closed) throw new Error('TransformersEmbedder is closed');
    const vectors: number[][] = [];
    for (const batch of splitIntoBatches(texts, this.batchSize)) {
      options.signal?.throwIfAborted();
      vectors.push(...(await embedBatch(this.extractor, batch, this.maxInputTokens, this.pooling)));
    }
    return vectors;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.extractor.dispose();
  }
}

export function createTransformersEmbedder(options: TransformersEmbedderOptions): Promise<TransformersEmbedder> {
  return TransformersEmbedder.load(options);
}

async function loadExtractor(options: TransformersEmbedderOptions): Promise<FeatureExtractor> {
  const extractor = await loadFromSource(options, (modelPath, source) =>
    pipeline('feature-extraction', modelPath, {
      ...source,
      ...(options.dtype ? { dtype: options.dtype } : {}),
      ...(options.threads ? { session_options: { intraOpNumThreads: options.threads } } : {}),
    }),
  );
  return extractor as unknown as FeatureExtractor;
}

/**
 * What the feature-extraction pipeline's own call does, plus an explicit max_length: the
 * pipeline truncates only at the tokenizer's model_max_length, which some repos leave unset.
 */
async function embedBatch(extractor: FeatureExtractor, texts: string[], maxInputTokens: number, pooling: 'mean' | 'cls'): Promise<number[][]> {
  const inputs = extractor.tokenizer(texts, { padding: true, truncation: true, max_length: maxInputTokens });
  const outputs = await extractor.model(inputs);
  const hidden = outputs.last_hidden_state ?? outputs.token_embeddings ?? outputs.logits;
  if (hidden?.dims.length !== 3) {
    throw new Error(`model output has no [batch, sequence, hidden] tensor (got ${Object.keys(outputs).join(', ')})`);
  }
  const pooled = pooling === 'mean' ? mean_pooling(hidden, inputs.attention_mask) : hidden.slice(null, 0);
  const [rows, width] = pooled.dims as [number, number];
  const data = pooled.data as Float32Array;
  if (rows !== texts.length) throw new Error(`model returned ${rows} vectors for ${texts.length} texts`);
  return Array.from({ length: rows }, (_, i) => l2Normalize(data.subarray(i * width, (i + 1) * width)));
}
