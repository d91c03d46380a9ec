import { describe, expect, it } from 'vitest';
import { LexicalReranker } from '../../../src/retrieval/rerank/lexical-reranker.js';
import type { Reranker } from '../../../src/retrieval/rerank/reranker.js';

describe('LexicalReranker', () => {
  const reranker: Reranker = new LexicalReranker();

  it('puts texts that cover more of the query first', async () => {
    const hits = [
      { id: 'one-term', text: 'Solar panels solar panels solar panels on every roof.' },
      { id: 'all-terms', text: 'Solar panels lose efficiency in hot weather.' },
      { id: 'two-terms', text: 'Solar output in hot climates.' },
    ];
    const ranked = await reranker.rerank('solar panel efficiency hot weather', hits, 3);
    expect(ranked.map((h) => h.id)).toEqual(['all-terms', 'two-terms', 'one-term']);
    expect(ranked[0]!.rerankScore).toBeGreaterThan(ranked[1]!.rerankScore);
  });

  it('weights terms by how rare they are among the candidates', async () => {
    const hits = [
      { id: 'common', text: 'battery storage for homes' },
      { id: 'rare', text: 'battery recycling for cars' },
      { id: 'other', text: 'battery storage grid' },
    ];
    // "battery" is in every candidate and tells them apart least; "recycling" is in one.
    const ranked = await reranker.rerank('battery recycling storage', hits, 3);
    expect(ranked[0]!.id).toBe('rare');
  });

  it('prefers the shorter text at equal coverage', async () => {
    const hits = [
      { id: 'long', text: `Tides follow the moon. ${'Other unrelated filler words appear here. '.repeat(10)}` },
      { id: 'short', text: 'Tides follow the moon.' },
    ];
    const ranked = await reranker.rerank('moon tides', hits, 2);
    expect(ranked.map((h) => h.id)).toEqual(['short', 'long']);
    const flat = await new LexicalReranker({ lengthPenalty: 0 }).rerank('moon tides', hits, 2);
    expect(flat.map((h) => h.id)).toEqual(['long', 'short']);
  });

  it('keeps the incoming order on ties, the extra fields of each hit, and cuts at topK', async () => {
    const hits = [
      { id: 'a', text: 'nothing relevant', score: 0.9, source: 'dense' },
      { id: 'b', text: 'also nothing', score: 0.8, source: 'bm25' },
      { id: 'c', text: 'still nothing', score: 0.7, source: 'dense' },
    ];
    const ranked = await reranker.rerank('quantum', hits, 2);
    expect(ranked).toEqual([
      { id: 'a', text: 'nothing relevant', score: 0.9, source: 'dense', rerankScore: 0 },
      { id: 'b', text: 'also nothing', score: 0.8, source: 'bm25', rerankScore: 0 },
    ]);
  });

  it('handles empty input, topK 0 and queries without terms', async () => {
    expect(await reranker.rerank('anything', [], 5)).toEqual([]);
    expect(await reranker.rerank('anything', [{ id: 'a', text: 'anything' }], 0)).toEqual([]);
    const ranked = await reranker.rerank(
      'the of and',
      [
        { id: 'a', text: 'x' },
        { id: 'b', text: '' },
      ],
      5,
    );
    expect(ranked.map((h) => [h.id, h.rerankScore])).toEqual([
      ['a', 0],
      ['b', 0],
    ]);
    expect(() => new LexicalReranker({ lengthPenalty: 2 })).toThrow(RangeError);
  });
});
