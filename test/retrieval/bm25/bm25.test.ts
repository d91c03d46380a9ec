import { describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../../src/retrieval/bm25/analyzer.js';
import { DEFAULT_BM25_PARAMS, InMemoryBm25Index, bm25Idf, bm25Score, bm25TermScore, bm25TermWeight } from '../../../src/retrieval/bm25/bm25.js';
import { seededRandom } from '../../../testkit/vector-fixtures.js';

describe('BM25 formula', () => {
  it('uses idf = ln(1 + (N - df + 0.5) / (df + 0.5))', () => {
    expect(bm25Idf(10, 1)).toBeCloseTo(Math.log(1 + 9.5 / 1.5), 12);
    expect(bm25Idf(10, 10)).toBeGreaterThan(0);
    expect(bm25Idf(1000, 1)).toBeGreaterThan(bm25Idf(1000, 10));
  });

  it('saturates term frequency with k1 and normalises length with b', () => {
    const params = { k1: 1.2, b: 0.75 };
    // Average length: tf * (k1 + 1) / (tf + k1).
    expect(bm25TermWeight(1, 100, 100, params)).toBeCloseTo(1, 12);
    expect(bm25TermWeight(3, 100, 100, params)).toBeCloseTo((3 * 2.2) / 4.2, 12);
    expect(bm25TermWeight(100, 100, 100, params)).toBeLessThan(2.2);
    // Longer documents weigh the same tf less; b = 0 ignores length.
    expect(bm25TermWeight(2, 200, 100, params)).toBeLessThan(bm25TermWeight(2, 50, 100, params));
    expect(bm25TermWeight(2, 200, 100, { k1: 1.2, b: 0 })).toBeCloseTo(bm25TermWeight(2, 50, 100, { k1: 1.2, b: 0 }), 12);
    expect(bm25TermWeight(0, 10, 10)).toBe(0);
    expect(bm25TermWeight(1, 0, 0)).toBeCloseTo(1, 12);
  });

  it('matches a hand computation', () => {
    const stats = { termFrequency: 2, documentFrequency: 3, documentCount: 20, documentLength: 8, averageDocumentLength: 10 };
    const idf = Math.log(1 + (20 - 3 + 0.5) / (3 + 0.5));
    const weight = (2 * 2.2) / (2 + 1.2 * (1 - 0.75 + (0.75 * 8) / 10));
    expect(bm25TermScore(stats)).toBeCloseTo(idf * weight, 12);
    expect(DEFAULT_BM25_PARAMS).toEqual({ k1: 1.2, b: 0.75 });
  });
});

describe('InMemoryBm25Index', () => {
  const docs: Record<string, string> = {
    a: 'Aspirin reduces the risk of heart attack.',
    b: 'Heart disease and heart failure: a review of heart health.',
    c: 'Vitamin D supplements and bone density in older adults.',
    d: 'Aspirin and vitamin C for the common cold.',
  };
  const build = () => {
    const index = new InMemoryBm25Index();
    for (const [id, text] of Object.entries(docs)) index.add(id, text);
    return index;
  };

  it('ranks by BM25 with OR semantics over the query terms', () => {
    const hits = build().search('aspirin heart attack');
    expect(hits.map((h) => h.id)).toEqual(['a', 'b', 'd']);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('agrees with bm25Score computed term by term', () => {
    const index = build();
    const analyzer = index.analyzer;
    const query = analyzer.analyze('vitamin heart heart aspirin');
    for (const hit of index.searchTerms(query, { topK: 10, k1: 0.9, b: 0.4 })) {
      const tf = analyzer.termFrequencies(docs[hit.id]!);
      const length = [...tf.values()].reduce((x, y) => x + y, 0);
      const expected = bm25Score(query, { termFrequencies: tf, length }, index, { k1: 0.9, b: 0.4 });
      expect(hit.score).toBeCloseTo(expected, 10);
    }
  });

  it('keeps document frequencies and lengths right through replace and remove', () => {
    const index = build();
    expect(index.size).toBe(4);
    expect(index.documentFrequency('aspirin')).toBe(2);
    index.add('d', 'Zinc lozenges for the common cold.');
    expect(index.size).toBe(4);
    expect(index.documentFrequency('aspirin')).toBe(1);
    expect(index.remove('a')).toBe(true);
    expect(index.remove('a')).toBe(false);
    expect(index.documentFrequency('aspirin')).toBe(0);
    expect(index.search('aspirin')).toEqual([]);

    const fresh = new InMemoryBm25Index();
    fresh.add('b', docs.b!);
    fresh.add('c', docs.c!);
    fresh.add('d', 'Zinc lozenges for the common cold.');
    expect(index.averageDocumentLength).toBeCloseTo(fresh.averageDocumentLength, 12);
    expect(index.search('heart zinc bone')).toEqual(fresh.search('heart zinc bone'));
  });

  it('respects topK and breaks ties by insertion order', () => {
    const index = new InMemoryBm25Index(createAnalyzer({ stem: false }));
    for (let i = 0; i < 20; i++) index.add(`doc${i}`, 'same words here');
    const hits = index.search('words', { topK: 5 });
    expect(hits.map((h) => h.id)).toEqual(['doc0', 'doc1', 'doc2', 'doc3', 'doc4']);
  });

  it('finds a planted document among random ones', () => {
    const rand = seededRandom(3);
    const vocabulary = Array.from({ length: 300 }, (_, i) => `term${i}`);
    const index = new InMemoryBm25Index();
    for (let i = 0; i < 500; i++) {
      index.add(`r${i}`, Array.from({ length: 40 }, () => vocabulary[Math.floor(rand() * 300)]).join(' '));
    }
    index.add('target', 'term1 term2 rareword anotherrare term3');
    expect(index.search('rareword anotherrare term1', { topK: 1 })[0]!.id).toBe('target');
  });
});
