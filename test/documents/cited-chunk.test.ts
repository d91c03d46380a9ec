import { describe, expect, it } from 'vitest';
import { citedChunk } from '../../src/documents/cited-chunk.js';
import { LexicalReranker } from '../../src/retrieval/rerank/lexical-reranker.js';

describe('citedChunk', () => {
  const lexical = new LexicalReranker();
  const chunks = [
    { chunkId: 'a1', chunkIndex: 0, text: 'Vitamin D is made in the skin.' },
    { chunkId: 'a2', chunkIndex: 1, text: 'Calcium intake matters for bones.' },
    { chunkId: 'a3', chunkIndex: 2, text: 'Fractures in older adults follow low vitamin D and falls.' },
  ];
  const passage = { id: 'a1', score: 1, ranks: { vector: 1, text: 1 }, vectorIds: ['a2'] };

  it('cites the chunk covering most of the query in text and hybrid mode', () => {
    expect(citedChunk('vitamin D fractures', 'text', passage, chunks, lexical)?.chunkId).toBe('a3');
    expect(citedChunk('vitamin D fractures', 'hybrid', passage, chunks, lexical)?.chunkId).toBe('a3');
  });

  it('cites the nearest chunk in vector mode, and prefers it among chunks that cover the query alike', () => {
    expect(citedChunk('vitamin D fractures', 'vector', passage, chunks, lexical)?.chunkId).toBe('a2');
    expect(citedChunk('unrelated words', 'hybrid', passage, chunks, lexical)?.chunkId).toBe('a2');
    expect(citedChunk('unrelated words', 'text', { ...passage, vectorIds: [] }, chunks, lexical)?.chunkId).toBe('a1');
  });

  it('cites nothing for a passage without chunks (deleted meanwhile)', () => {
    expect(citedChunk('vitamin', 'text', passage, [], lexical)).toBeUndefined();
  });
});
