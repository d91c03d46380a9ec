export interface RerankCandidate {
  id: string;
  text: string;
  /** The retrieval score, kept as the tie-breaker. */
  score?: number;
}

export type Reranked<T extends RerankCandidate> = T & { rerankScore: number };

/**
 * Reorders the candidates of a first-stage search by looking at query and text together. Async
 * so a model-based reranker (a cross-encoder in a worker or behind an API) fits the same slot as
 * the lexical one.
 */
export interface Reranker {
  readonly id: string;
  /** Returns the best `topK` of `hits` by `rerankScore`; a model-based reranker stops when `signal` aborts. */
  rerank<T extends RerankCandidate>(query: string, hits: readonly T[], topK: number, options?: RerankOptions): Promise<Reranked<T>[]>;
}

export interface RerankOptions {
  signal?: AbortSignal;
}
