import { defaultAnalyzer, type Analyzer } from './analyzer.js';

/**
 * Okapi BM25 as Lucene computes it, with the (k1 + 1) factor kept (it rescales every score alike
 * and so never changes a ranking). Each piece is a plain expression so the database can compute
 * the same number from a postings table; with
 *
 *   postings(chunk_id, term, tf), chunks(id, length), term_stats(term, df), corpus_stats(n, total_length)
 *
 * kept in one transaction, a query's terms and their counts in the query ($1 text[], $2 int[]) give
 *
 *   SELECT p.chunk_id,
 *          SUM(q.qtf * ln(1 + (s.n - t.df + 0.5) / (t.df + 0.5))
 *                    * p.tf * (k1 + 1) / (p.tf + k1 * (1 - b + b * c.length / (s.total_length::float8 / s.n)))) AS score
 *   FROM unnest($1::text[], $2::int[]) AS q(term, qtf)
 *   JOIN postings p ON p.term = q.term
 *   JOIN term_stats t ON t.term = q.term
 *   JOIN chunks c ON c.id = p.chunk_id
 *   CROSS JOIN corpus_stats s
 *   GROUP BY p.chunk_id ORDER BY score DESC LIMIT $3;
 *
 * which is `bm25Score` below term for term (OR semantics: a chunk needs any one query term).
 */
export interface Bm25Params {
  /** Term-frequency saturation: how much the 2nd, 3rd... occurrence still adds. */
  k1: number;
  /** Length normalisation: 0 ignores document length, 1 divides fully by it relative to the average. */
  b: number;
}

/**
 * Lucene's defaults. On SciFact they tie with the best of k1 ∈ {0.9, 1.2, 1.5} × b ∈ {0.4, 0.75}
 * (nDCG@10 0.698 vs 0.699; scripts/bench/bm25-analyzer.ts).
 */
export const DEFAULT_BM25_PARAMS: Readonly<Bm25Params> = Object.freeze({ k1: 1.2, b: 0.75 });

/**
 * Lucene's idf, ln(1 + (N - df + 0.5) / (df + 0.5)): unlike Robertson's original it never goes
 * negative for terms in more than half of the documents, so a common term can only add to a score.
 */
export function bm25Idf(documentCount: number, documentFrequency: number): number {
  return Math.log(1 + (documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5));
}

/** The saturated, length-normalised term frequency: the part of BM25 that depends on the document. */
export function bm25TermWeight(
  termFrequency: number,
  documentLength: number,
  averageDocumentLength: number,
  { k1, b }: Bm25Params = DEFAULT_BM25_PARAMS,
): number {
  if (termFrequency <= 0) return 0;
  const relativeLength = averageDocumentLength > 0 ? documentLength / averageDocumentLength : 1;
  return (termFrequency * (k1 + 1)) / (termFrequency + k1 * (1 - b + b * relativeLength));
}

export interface Bm25TermStats {
  termFrequency: number;
  documentFrequency: number;
  documentCount: number;
  documentLength: number;
  averageDocumentLength: number;
}

export function bm25TermScore(stats: Bm25TermStats, params: Bm25Params = DEFAULT_BM25_PARAMS): number {
  return bm25Idf(stats.documentCount, stats.documentFrequency) * bm25TermWeight(stats.termFrequency, stats.documentLength, stats.averageDocumentLength, params);
}

export interface Bm25CorpusStats {
  documentCount: number;
  averageDocumentLength: number;
  documentFrequency(term: string): number;
}

/**
 * A document's score for a query: the sum over query terms, a term repeated in the query counting
 * each time (as Lucene's boolean query does).
 */
export function bm25Score(
  queryTerms: readonly string[],
  document: { termFrequencies: ReadonlyMap<string, number>; length: number },
  corpus: Bm25CorpusStats,
  params: Bm25Params = DEFAULT_BM25_PARAMS,
): number {
  let score = 0;
  for (const term of queryTerms) {
    const termFrequency = document.termFrequencies.get(term) ?? 0;
    if (termFrequency === 0) continue;
    score += bm25TermScore(
      {
        termFrequency,
        documentFrequency: corpus.documentFrequency(term),
        documentCount: corpus.documentCount,
        documentLength: document.length,
        averageDocumentLength: corpus.averageDocumentLength,
      },
      params,
    );
  }
  return score;
}

export interface Bm25Hit {
  id: string;
  score: number;
}

export interface Bm25SearchOptions extends Partial<Bm25Params> {
  topK?: number;
}

/**
 * BM25 over documents held in memory: for tests, for tuning the analyzer and parameters offline,
 * and as the reference the SQL implementation is checked against.
 */
export class InMemoryBm25Index implements Bm25CorpusStats {
  private readonly postings = new Map<string, Map<number, number>>();
  private readonly slots = new Map<string, number>();
  private readonly ids: (string | undefined)[] = [];
  private readonly lengths: number[] = [];
  private readonly termsOf: string[][] = [];
  private totalLength = 0;

  constructor(readonly analyzer: Analyzer = defaultAnalyzer) {}

  get size(): number {
    return this.slots.size;
  }

  get documentCount(): number {
    return this.slots.size;
  }

  get averageDocumentLength(): number {
    return this.size > 0 ? this.totalLength / this.size : 0;
  }

  documentFrequency(term: string): number {
    return this.postings.get(term)?.size ?? 0;
  }

  /** Adds a document, replacing any earlier one with the same id. */
  add(id: string, text: string): void {
    this.remove(id);
    const frequencies = this.analyzer.termFrequencies(text);
    const slot = this.ids.length;
    let length = 0;
    for (const [term, tf] of frequencies) {
      let list = this.postings.get(term);
      if (!list) this.postings.set(term, (list = new Map()));
      list.set(slot, tf);
      length += tf;
    }
    this.ids.push(id);
    this.lengths.push(length);
    this.termsOf.push([...frequencies.keys()]);
    this.slots.set(id, slot);
    this.totalLength += length;
  }

  remove(id: string): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    for (const term of this.termsOf[slot]!) {
      const list = this.postings.get(term)!;
      list.delete(slot);
      if (list.size === 0) this.postings.delete(term);
    }
    this.totalLength -= this.lengths[slot]!;
    this.ids[slot] = undefined;
    this.termsOf[slot] = [];
    this.slots.delete(id);
    return true;
  }

  /** Documents holding at least one query term, best first; ties in insertion order. */
  search(query: string, options: Bm25SearchOptions = {}): Bm25Hit[] {
    return this.searchTerms(this.analyzer.analyze(query), options);
  }

  searchTerms(queryTerms: readonly string[], options: Bm25SearchOptions = {}): Bm25Hit[] {
    const params = { k1: options.k1 ?? DEFAULT_BM25_PARAMS.k1, b: options.b ?? DEFAULT_BM25_PARAMS.b };
    const topK = options.topK ?? 10;
    const queryCounts = new Map<string, number>();
    for (const term of queryTerms) queryCounts.set(term, (queryCounts.get(term) ?? 0) + 1);

    const n = this.size;
    const avgdl = this.averageDocumentLength;
    const scores = new Map<number, number>();
    for (const [term, count] of queryCounts) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = bm25Idf(n, list.size);
      for (const [slot, tf] of list) {
        const add = count * idf * bm25TermWeight(tf, this.lengths[slot]!, avgdl, params);
        scores.set(slot, (scores.get(slot) ?? 0) + add);
      }
    }
    return [...scores]
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, topK)
      .map(([slot, score]) => ({ id: this.ids[slot]!, score }));
  }
}
