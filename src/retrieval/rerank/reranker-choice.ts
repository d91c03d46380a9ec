/** The rerankers a search can ask for, by name; `cross-encoder` exists only with RERANKER_MODEL. */
export const RERANKERS = ['none', 'lexical', 'cross-encoder'] as const;
export type RerankerChoice = (typeof RERANKERS)[number];
