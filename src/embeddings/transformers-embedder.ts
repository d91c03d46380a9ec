import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { env, mean_pooling, pipeline, type Tensor } from '@huggingface/transformers';
import type { Embedder } from './embedder.js';
import { l2Normalize } from './l2-normalize.js';
import { splitIntoBatches } from './split-into-batches.js';

export interface TransformersEmbedderOptions {
  /** A Hugging Face model id (`Xenova/all-MiniLM-L6-v2`) or a local folder laid out like one. */
  model: string;
  /** Where downloaded models are kept and looked up (transformers.js `env.cacheDir`). */
  cacheDir?: string;
  /** May files missing locally be fetched from the Hugging Face hub? Default false: offline. */
  allowRemote?: boolean;
  /** Texts per model call. Default 32. */
  batchSize?: number;
  /** 'mean' (sentence-transformers default) or 'cls' (e.g. the BGE family). Default 'mean'. */
  pooling?: 'mean' | 'cls';
  /** ONNX weight variant, e.g. 'fp32' or 'q8' (picks onnx/model.onnx or onnx/model_quantized.onnx). */
  dtype?: 'auto' | 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4';
  /** onnxruntime intra-op threads; the pool sets 1 per worker so workers do not fight over cores. */
  threads?: number;
}

/** Tokenizers without a real limit report 1e30 (Python's VERY_LARGE_INTEGER) or leave it unset. */
const UNSET_LIMIT = 1_000_000;
const FALLBACK_MAX_INPUT_TOKENS = 512;

interface BatchEncoding {
  input_ids: Tensor;
  attention_mask: Tensor;
  [name: string]: Tensor;
}
interface FeatureExtractor {
  tokenizer: {
    model_max_length: unknown;
    (texts: string[], options: { padding: boolean; truncation: boolean; max_length: number }): BatchEncoding;
  };
  model: {
    config: { max_position_embeddings?: unknown };
    (inputs: BatchEncoding): Promise<Record<string, Tensor | undefined>>;
  };
  dispose(): Promise<void>;
}

// env is process-wide, and pipeline() consults it (not only its options) while listing files, so
// loads are serialised to keep each one's cache/remote settings in force until it has finished.
let loading: Promise<unknown> = Promise.resolve();

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
    const localFolder = resolveLocalFolder(options.model);
    const next = loading.then(() => loadExtractor(options, localFolder));
    loading = next.catch(() => undefined);
    const extractor = await next;

    const maxInputTokens = detectMaxInputTokens(extractor);
    const pooling = options.pooling ?? 'mean';
    try {
      // Configs disagree on where the width lives (hidden_size, d_model, dim...); the output does not.
      const [probe] = await embedBatch(extractor, ['dimension probe'], maxInputTokens, pooling);
      const name = localFolder ? path.basename(localFolder) : options.model;
      return new TransformersEmbedder(
        `transformers:${name}`,
        probe!.length,
        maxInputTokens,
        extractor,
        options.batchSize ?? 32,
        pooling,
      );
    } catch (error) {
      await extractor.dispose();
      throw error;
    }
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

/**
 * An existing directory is a local model. transformers.js treats absolute paths as local
 * folders but reads `owner/name`-shaped relative paths as hub ids, so folders are made absolute.
 */
function resolveLocalFolder(model: string): string | undefined {
  const candidate = path.resolve(model);
  return existsSync(candidate) && statSync(candidate).isDirectory() ? candidate : undefined;
}

async function loadExtractor(options: TransformersEmbedderOptions, localFolder: string | undefined): Promise<FeatureExtractor> {
  const allowRemote = options.allowRemote ?? false;
  env.allowLocalModels = true;
  env.allowRemoteModels = allowRemote;
  if (options.cacheDir) env.cacheDir = path.resolve(options.cacheDir);
  const extractor = await pipeline('feature-extraction', localFolder ?? options.model, {
    ...(options.cacheDir ? { cache_dir: path.resolve(options.cacheDir) } : {}),
    local_files_only: !allowRemote,
    ...(options.dtype ? { dtype: options.dtype } : {}),
    ...(options.threads ? { session_options: { intraOpNumThreads: options.threads } } : {}),
  });
  return extractor as unknown as FeatureExtractor;
}

function detectMaxInputTokens(extractor: FeatureExtractor): number {
  const fromTokenizer = Number(extractor.tokenizer.model_max_length);
  if (Number.isFinite(fromTokenizer) && fromTokenizer > 0 && fromTokenizer < UNSET_LIMIT) return fromTokenizer;
  const fromConfig = Number(extractor.model.config.max_position_embeddings);
  if (Number.isFinite(fromConfig) && fromConfig > 0) return fromConfig;
  return FALLBACK_MAX_INPUT_TOKENS;
}

/**
 * What the feature-extraction pipeline's own call does, plus an explicit max_length: the
 * pipeline truncates only at the tokenizer's model_max_length, which some repos leave unset.
 */
async function embedBatch(
  extractor: FeatureExtractor,
  texts: string[],
  maxInputTokens: number,
  pooling: 'mean' | 'cls',
): Promise<number[][]> {
  const inputs = extractor.tokenizer(texts, { padding: true, truncation: true, max_length: maxInputTokens });
  const outputs = await extractor.model(inputs);
  const hidden = outputs.last_hidden_state ?? outputs.token_embeddings ?? outputs.logits;
  if (!hidden || hidden.dims.length !== 3) {
    throw new Error(`model output has no [batch, sequence, hidden] tensor (got ${Object.keys(outputs).join(', ')})`);
  }
  const pooled = pooling === 'mean' ? mean_pooling(hidden, inputs.attention_mask) : hidden.slice(null, 0);
  const [rows, width] = pooled.dims as [number, number];
  const data = pooled.data as Float32Array;
  if (rows !== texts.length) throw new Error(`model returned ${rows} vectors for ${texts.length} texts`);
  return Array.from({ length: rows }, (_, i) => l2Normalize(data.subarray(i * width, (i + 1) * width)));
}
