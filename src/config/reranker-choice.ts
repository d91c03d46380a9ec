/**
 * The rerankers a search can ask for, by name; `cross-encoder` exists only with RERANKER_MODEL.
 * Declared here, under the features, because RERANKER_DEFAULT is checked against them; retrieval,
 * agents and the HTTP schemas take them from src/retrieval/rerank/reranker-choice.ts.
 */
export const RERANKERS = ['none', 'lexical', 'cross-encoder'] as const;
export type RerankerChoice = (typeof RERANKERS)[number];
