import { defaultAnalyzer, type Analyzer } from '../bm25/analyzer.js';
import { bm25Idf } from '../bm25/bm25.js';
import type { RerankCandidate, Reranked, Reranker } from './reranker.js';

export interface LexicalRerankerOptions {
  analyzer?: Analyzer;
  /**
   * Strength of the length penalty, 0 to 1: a text twice the candidates' average length scores
   * 1 / (1 + lengthPenalty) of the same coverage in an average one. Default 0.25: coverage
   * decides, length separates texts that cover the same terms.
   */
  lengthPenalty?: number;
}

/**
 * Reranks by how much of the query a text covers: the idf-weighted share of the distinct query
 * terms it contains, divided by a pivoted length norm. Idf is taken over the candidates
 * themselves, so a term every candidate shares (the topic that brought them all back) counts for
 * little and the terms that tell them apart count for much. Cheap and model-free; it favours
 * chunks that answer every part of a question over chunks that repeat one of its words, which
 * BM25's per-term sum can rank first.
 */
export class LexicalReranker implements Reranker {
  readonly id: string;
  private readonly analyzer: Analyzer;
  private readonly lengthPenalty: number;

  constructor(options: LexicalRerankerOptions = {}) {
    this.analyzer = options.analyzer ?? defaultAnalyzer;
    this.lengthPenalty = options.lengthPenalty ?? 0.25;
    if (!(this.lengthPenalty >= 0 && this.lengthPenalty <= 1)) throw new RangeError(`lengthPenalty must be in [0, 1], got ${this.lengthPenalty}`);
    this.id = `lexical:${this.analyzer.id}:${this.lengthPenalty}`;
  }

  async rerank<T extends RerankCandidate>(query: string, hits: readonly T[], topK: number): Promise<Reranked<T>[]> {
    return this.rerankSync(query, hits, topK);
  }

  rerankSync<T extends RerankCandidate>(query: string, hits: readonly T[], topK: number): Reranked<T>[] {
    if (topK <= 0 || hits.length === 0) return [];
    const queryTerms = [...new Set(this.analyzer.analyze(query))];
    const docs = hits.map((hit) => this.analyzer.termFrequencies(hit.text));
    const lengths = docs.map((tf) => [...tf.values()].reduce((a, b) => a + b, 0));
    const averageLength = lengths.reduce((a, b) => a + b, 0) / hits.length || 1;

    const weights = queryTerms.map((term) => bm25Idf(hits.length, docs.filter((tf) => tf.has(term)).length));
    const totalWeight = weights.reduce((a, b) => a + b, 0);

    const scored = hits.map((hit, i) => {
      let covered = 0;
      queryTerms.forEach((term, t) => {
        if (docs[i]!.has(term)) covered += weights[t]!;
      });
      const coverage = totalWeight > 0 ? covered / totalWeight : 0;
      const norm = 1 - this.lengthPenalty + this.lengthPenalty * (lengths[i]! / averageLength);
      return { hit, rerankScore: coverage > 0 ? coverage / norm : 0, order: i };
    });
    // Equal scores keep the first stage's order, which saw more than this reranker does.
    scored.sort((a, b) => b.rerankScore - a.rerankScore || a.order - b.order);
    return scored.slice(0, topK).map(({ hit, rerankScore }) => ({ ...hit, rerankScore }));
  }
}
