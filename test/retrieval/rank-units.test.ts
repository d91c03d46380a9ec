import { describe, expect, it } from 'vitest';
import { rankUnits } from '../../src/retrieval/rank-units.js';

const weights = { signals: { vector: 1, text: 1 }, k: 60 };
// Rows (chunks) a1, a2 belong to unit (passage) a; b1 to b; c1 to c.
const vector = [
  { id: 'a2', unitId: 'a', score: 0.9 },
  { id: 'b1', unitId: 'b', score: 0.8 },
  { id: 'a1', unitId: 'a', score: 0.7 },
  { id: 'c1', unitId: 'c', score: 0.6 },
];
const text = [
  { id: 'c', score: 7 },
  { id: 'd', score: 3 },
];

describe('rankUnits (a corpus whose rows count for units, as chunks for passages)', () => {
  it('counts a unit once, at the rank of its nearest row, with its rows nearest first', () => {
    const ranked = rankUnits('vector', vector, [], weights);
    expect(ranked.map((p) => [p.id, p.score, p.ranks.vector])).toEqual([
      ['a', 0.9, 1],
      ['b', 0.8, 2],
      ['c', 0.6, 3],
    ]);
    expect(ranked[0]!.vectorIds).toEqual(['a2', 'a1']);
  });

  // A unit the embedder found in two rows would otherwise collect two shares of the vector side.
  it('fuses units, not rows: two rows of one unit add one vector share', () => {
    const ranked = rankUnits('hybrid', vector, text, weights);
    const byId = new Map(ranked.map((p) => [p.id, p]));
    expect(byId.get('a')!.score).toBeCloseTo(1 / 61, 12);
    expect(byId.get('c')!.score).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(byId.get('c')!.ranks).toEqual({ vector: 3, text: 1 });
    expect(byId.get('d')!.ranks).toEqual({ vector: null, text: 2 });
    expect(ranked.map((p) => p.id)).toEqual(['c', 'a', 'b', 'd']);
  });

  it('fuses every signal of the map by its weight in hybrid mode; one of weight 0 keeps its ids in the union, adding nothing', () => {
    const pinned = { pinned: ['e', 'b'] };
    const byId = (w: number) =>
      new Map(rankUnits('hybrid', vector, text, { ...weights, signals: { ...weights.signals, pinned: w } }, pinned).map((p) => [p.id, p]));
    const weighted = byId(2);
    expect(weighted.get('e')!.score).toBeCloseTo(2 / 61, 12);
    expect(weighted.get('b')!.score).toBeCloseTo(1 / 62 + 2 / 62, 12);
    expect(weighted.get('b')!.ranks).toEqual({ vector: 2, text: null, pinned: 2 });
    const unweighted = byId(0);
    expect(unweighted.get('e')).toMatchObject({ score: 0, ranks: { vector: null, text: null, pinned: 1 } });
    expect(unweighted.get('b')!.score).toBeCloseTo(1 / 62, 12);
    expect(rankUnits('text', vector, text, weights, pinned).map((p) => p.ranks)).toEqual([
      { vector: 3, text: 1 },
      { vector: null, text: 2 },
    ]);
  });

  it('keeps the retriever of the mode only, with its scores', () => {
    expect(rankUnits('text', vector, text, weights).map((p) => [p.id, p.score])).toEqual([
      ['c', 7],
      ['d', 3],
    ]);
  });
});
