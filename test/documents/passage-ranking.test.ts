import { describe, expect, it } from 'vitest';
import { citedChunk, rankPassages } from '../../src/documents/passage-ranking.js';
import { LexicalReranker } from '../../src/retrieval/rerank/lexical-reranker.js';

const weights = { vector: 1, text: 1, k: 60 };
// Chunks a1, a2 belong to passage a; b1 to b; c1 to c.
const vector = [
  { id: 'a2', passageId: 'a', score: 0.9 },
  { id: 'b1', passageId: 'b', score: 0.8 },
  { id: 'a1', passageId: 'a', score: 0.7 },
  { id: 'c1', passageId: 'c', score: 0.6 },
];
const text = [
  { id: 'c', score: 7 },
  { id: 'd', score: 3 },
];

describe('rankPassages', () => {
  it('counts a passage once, at the rank of its nearest chunk, with its chunks nearest first', () => {
    const ranked = rankPassages('vector', vector, [], weights);
    expect(ranked.map((p) => [p.passageId, p.score, p.ranks.vector])).toEqual([
      ['a', 0.9, 1],
      ['b', 0.8, 2],
      ['c', 0.6, 3],
    ]);
    expect(ranked[0]!.vectorChunks).toEqual(['a2', 'a1']);
  });

  // A passage the embedder found in two chunks would otherwise collect two shares of the vector side.
  it('fuses passages, not chunks: two chunks of one passage add one vector share', () => {
    const ranked = rankPassages('hybrid', vector, text, weights);
    const byId = new Map(ranked.map((p) => [p.passageId, p]));
    expect(byId.get('a')!.score).toBeCloseTo(1 / 61, 12);
    expect(byId.get('c')!.score).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(byId.get('c')!.ranks).toEqual({ vector: 3, text: 1 });
    expect(byId.get('d')!.ranks).toEqual({ vector: null, text: 2 });
    expect(ranked.map((p) => p.passageId)).toEqual(['c', 'a', 'b', 'd']);
  });

  it('keeps the retriever of the mode only, with its scores', () => {
    expect(rankPassages('text', vector, text, weights).map((p) => [p.passageId, p.score])).toEqual([
      ['c', 7],
      ['d', 3],
    ]);
  });
});

describe('citedChunk', () => {
  const lexical = new LexicalReranker();
  const chunks = [
    { chunkId: 'a1', chunkIndex: 0, text: 'Vitamin D is made in the skin.' },
    { chunkId: 'a2', chunkIndex: 1, text: 'Calcium intake matters for bones.' },
    { chunkId: 'a3', chunkIndex: 2, text: 'Fractures in older adults follow low vitamin D and falls.' },
  ];
  const passage = { passageId: 'a1', score: 1, ranks: { vector: 1, text: 1 }, vectorChunks: ['a2'] };

  it('cites the chunk covering most of the query in text and hybrid mode', () => {
    expect(citedChunk('vitamin D fractures', 'text', passage, chunks, lexical)?.chunkId).toBe('a3');
    expect(citedChunk('vitamin D fractures', 'hybrid', passage, chunks, lexical)?.chunkId).toBe('a3');
  });

  it('cites the nearest chunk in vector mode, and prefers it among chunks that cover the query alike', () => {
    expect(citedChunk('vitamin D fractures', 'vector', passage, chunks, lexical)?.chunkId).toBe('a2');
    expect(citedChunk('unrelated words', 'hybrid', passage, chunks, lexical)?.chunkId).toBe('a2');
    expect(citedChunk('unrelated words', 'text', { ...passage, vectorChunks: [] }, chunks, lexical)?.chunkId).toBe('a1');
  });

  it('cites nothing for a passage without chunks (deleted meanwhile)', () => {
    expect(citedChunk('vitamin', 'text', passage, [], lexical)).toBeUndefined();
  });
});
