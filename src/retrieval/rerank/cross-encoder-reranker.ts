import { splitIntoBatches } from '../../embeddings/split-into-batches.js';
import { type CrossEncoderModelOptions, type CrossEncoderScorer, CrossEncoderModel } from './cross-encoder-model.js';
import { CrossEncoderWorkers } from './cross-encoder-workers.js';
import type { RerankCandidate, RerankOptions, Reranked, Reranker } from './reranker.js';

export interface CrossEncoderRerankerOptions extends CrossEncoderModelOptions {
  /**
   * Worker threads running the model. Default 1. 0 runs it in the calling thread, which then
   * stalls for the length of each batch (it yields between batches).
   */
  workers?: number;
  /** Pairs per model call. Default 16. */
  batchSize?: number;
}

export const DEFAULT_RERANK_BATCH_SIZE = 16;

/**
 * Reranks with a cross-encoder: the model reads query and passage together and scores each
 * pair, which sees far more than either first-stage retriever. Cost grows with the candidates
 * times their length, so it reranks the first stage's candidateK, not the corpus.
 */
export class CrossEncoderReranker implements Reranker {
  readonly id: string;

  constructor(
    private readonly scorer: CrossEncoderScorer,
    private readonly batchSize = DEFAULT_RERANK_BATCH_SIZE,
  ) {
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
    this.id = scorer.id;
  }

  static async load(options: CrossEncoderRerankerOptions): Promise<CrossEncoderReranker> {
    const { workers = 1, batchSize, ...model } = options;
    const scorer = workers === 0 ? await CrossEncoderModel.load(model) : await CrossEncoderWorkers.start({ ...model, workers });
    return new CrossEncoderReranker(scorer, batchSize);
  }

  /** Tokens per (query, passage) pair the model reads; the rest of a passage is not seen. */
  get maxLength(): number {
    return this.scorer.maxLength;
  }

  async rerank<T extends RerankCandidate>(query: string, hits: readonly T[], topK: number, options: RerankOptions = {}): Promise<Reranked<T>[]> {
    const { signal } = options;
    signal?.throwIfAborted();
    if (topK <= 0 || hits.length === 0) return [];

    // Texts of similar length share a batch, so little of each batch is padding.
    const byLength = hits.map((_, i) => i).sort((a, b) => hits[a]!.text.length - hits[b]!.text.length);
    const batches = splitIntoBatches(byLength, this.batchSize);
    const scores = new Array<number>(hits.length);
    // At most `parallelism` batches of one call in flight: concurrent calls then take turns at
    // the workers instead of one long call holding them all until it is done.
    let next = 0;
    const lane = async () => {
      try {
        while (next < batches.length) {
          const batch = batches[next++]!;
          signal?.throwIfAborted();
          const batchScores = await this.scorer.score(
            query,
            batch.map((i) => hits[i]!.text),
            { signal },
          );
          batch.forEach((hitIndex, j) => {
            const score = batchScores[j]!;
            scores[hitIndex] = Number.isNaN(score) ? Number.NEGATIVE_INFINITY : score;
          });
          // A model in this thread blocked it for the batch: let waiting requests run first.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (error) {
        // The call has failed; the other lanes should not start more batches for it.
        next = batches.length;
        throw error;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.scorer.parallelism, batches.length) }, lane));

    const ranked = hits.map((hit, order) => ({ hit, rerankScore: scores[order]!, order }));
    // Equal model scores fall back to the first stage's score, then its order.
    ranked.sort((a, b) => b.rerankScore - a.rerankScore || firstStage(b.hit) - firstStage(a.hit) || a.order - b.order);
    return ranked.slice(0, topK).map(({ hit, rerankScore }) => ({ ...hit, rerankScore }));
  }

  close(): Promise<void> {
    return this.scorer.close();
  }
}

export function createCrossEncoderReranker(options: CrossEncoderRerankerOptions): Promise<CrossEncoderReranker> {
  return CrossEncoderReranker.load(options);
}

function firstStage(hit: RerankCandidate): number {
  return hit.score ?? 0;
}
