import type { RerankerChoice } from './rerank/reranker-choice.js';

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
  /**
   * The whole passage the chunk belongs to (the consecutive chunks retrieval scored together):
   * what an answer without a model picks sentences from. Absent from retrievers that do not have it.
   */
  passage?: PassageText;
}

export interface PassageText {
  /** Where the passage starts in the document's extracted text; `text` offsets are relative to it. */
  start: number;
  text: string;
  /** Where each run of the passage under one heading path starts (relative to `start`), in order. */
  sections: { start: number; headingPath: string[] }[];
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
  /** Fill `passage` in on each hit (an answer without a model reads it); off, hits stay small for prompts and replies. */
  passages?: boolean;
  signal?: AbortSignal;
}

export interface KnowledgeRetriever {
  search(query: string, options: KnowledgeSearchOptions): Promise<KnowledgeHit[]>;
}
