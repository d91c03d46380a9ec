import type { RerankerChoice } from '../retrieval/rerank/reranker-choice.js';

/**
 * The seam to document retrieval, which is built separately. The chat depends on this interface
 * only, so it works today without documents and picks them up once a retriever is wired in.
 */
export interface KnowledgeHit {
  documentId: string;
  title: string;
  chunkId: string;
  /** Headings from the document root down to the chunk, e.g. ['Install', 'Linux']. */
  headingPath: string[];
  /** Character range of the chunk in the document's extracted text. */
  start: number;
  end: number;
  text: string;
  score: number;
}

export interface KnowledgeSearchOptions {
  topK: number;
  /** Candidates fetched before fusion and reranking; the retriever's default when absent. */
  candidateK?: number;
  /** The retriever's default when absent. */
  reranker?: RerankerChoice;
  tagsAny?: readonly string[];
  tagsAll?: readonly string[];
  tagsNone?: readonly string[];
  signal?: AbortSignal;
}

export interface KnowledgeRetriever {
  search(query: string, options: KnowledgeSearchOptions): Promise<KnowledgeHit[]>;
}
