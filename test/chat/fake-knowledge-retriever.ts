import type { KnowledgeHit, KnowledgeRetriever, KnowledgeSearchOptions } from '../../src/retrieval/knowledge.js';

/** Document chunks in memory, ranked by shared words: enough to drive the chat without the real index. */
export function createFakeKnowledgeRetriever(
  hits: Omit<KnowledgeHit, 'score'>[],
): KnowledgeRetriever & { calls: { query: string; options: KnowledgeSearchOptions }[] } {
  const calls: { query: string; options: KnowledgeSearchOptions }[] = [];
  const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  return {
    calls,
    async search(query, options) {
      calls.push({ query, options });
      const q = words(query);
      return hits
        .map((hit) => ({ ...hit, score: [...words(hit.text)].filter((w) => q.has(w)).length }))
        .filter((hit) => hit.score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, options.topK);
    },
  };
}
