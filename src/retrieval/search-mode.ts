/**
 * How a corpus is searched: `hybrid` fuses the vector and BM25 candidates, `vector` ranks by
 * cosine similarity only, `text` by BM25 only (nothing is embedded).
 */
export const SEARCH_MODES = ['hybrid', 'vector', 'text'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
