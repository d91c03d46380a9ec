import type { Embedder } from '../../embeddings/embedder.js';
import type { DocumentFormat } from '../parsers/document-format.js';
import type { ChunkedDocument } from './chunk-stage.js';

export const DEFAULT_EMBED_BATCH_SIZE = 64;

export interface EmbedStageOptions {
  embedder: Embedder;
  /** Texts per embedder call. Default 64. */
  batchSize?: number;
  /** Checked before each batch and handed to the embedder. */
  signal?: AbortSignal;
  /** After each batch: chunks embedded so far, of all. */
  onProgress?: (progress: { done: number; total: number }) => void;
}

export interface EmbeddedDocument<F extends string = DocumentFormat> extends ChunkedDocument<F> {
  /** One per chunk, in chunk order. */
  vectors: number[][];
}

/**
 * Stage 4: a vector for each chunk's indexed text, in batches. Nothing is written here: the model
 * may take long, and the write stage is the transaction.
 */
export async function embedStage<F extends string>(document: ChunkedDocument<F>, options: EmbedStageOptions): Promise<EmbeddedDocument<F>> {
  const { embedder, signal } = options;
  const batchSize = options.batchSize ?? DEFAULT_EMBED_BATCH_SIZE;
  const texts = document.chunks.map((c) => c.indexedText);
  const vectors: number[][] = [];
  for (let i = 0; i < texts.length; i += batchSize) {
    signal?.throwIfAborted();
    const batch = texts.slice(i, i + batchSize);
    const out = await embedder.embed(batch, signal ? { signal } : {});
    if (out.length !== batch.length || out.some((v) => v.length !== embedder.dimensions)) {
      throw new Error(`embedder ${embedder.id} returned ${out.length} vectors for ${batch.length} texts, or vectors of the wrong size`);
    }
    vectors.push(...out);
    options.onProgress?.({ done: vectors.length, total: texts.length });
  }
  return { ...document, vectors };
}
