import { describe, expect, it } from 'vitest';
import { fuse } from '../../src/retrieval/fusion.js';

describe('fuse (weighted reciprocal rank fusion)', () => {
  it('sums weight / (k + rank) over the lists holding an id', () => {
    const fused = fuse([
      { ids: ['a', 'b', 'c'], weight: 1 },
      { ids: ['c', 'a', 'd'], weight: 1 },
    ]);
    const score = Object.fromEntries(fused.map((h) => [h.id, h.score]));
    expect(score.a).toBeCloseTo(1 / 61 + 1 / 62, 15);
    expect(score.c).toBeCloseTo(1 / 63 + 1 / 61, 15);
    expect(score.b).toBeCloseTo(1 / 62, 15);
    expect(score.d).toBeCloseTo(1 / 63, 15);
    expect(fused.map((h) => h.id)).toEqual(['a', 'c', 'b', 'd']);
  });

  it("keeps ids found by one list only, and reports each list's rank", () => {
    const fused = fuse([
      { ids: ['x'], weight: 1 },
      { ids: ['y', 'x'], weight: 1 },
    ]);
    expect(fused).toEqual([
      { id: 'x', score: 1 / 61 + 1 / 62, ranks: [1, 2] },
      { id: 'y', score: 1 / 61, ranks: [undefined, 1] },
    ]);
  });

  it('lets weights decide between lists', () => {
    const lists = (w1: number, w2: number) =>
      fuse([
        { ids: ['lexical'], weight: w1 },
        { ids: ['dense'], weight: w2 },
      ]).map((h) => h.id);
    expect(lists(2, 1)).toEqual(['lexical', 'dense']);
    expect(lists(1, 2)).toEqual(['dense', 'lexical']);
    const zero = fuse([
      { ids: ['a'], weight: 0 },
      { ids: ['b'], weight: 1 },
    ]);
    expect(zero.map((h) => [h.id, h.score])).toEqual([
      ['b', 1 / 61],
      ['a', 0],
    ]);
  });

  it('uses k: a smaller k favours the top ranks more', () => {
    const lists = [
      { ids: ['a', 'x', 'b'], weight: 1 },
      { ids: ['c', 'd', 'e', 'b'], weight: 1 },
    ];
    // b (ranks 3 and 4) beats a (rank 1 only) at k = 60, but not at k = 1.
    expect(fuse(lists, 60)[0]!.id).toBe('b');
    expect(fuse(lists, 1)[0]!.id).toBe('a');
  });

  it('counts a repeated id once, at its best rank', () => {
    const fused = fuse([{ ids: ['a', 'b', 'a'], weight: 1 }]);
    expect(fused.map((h) => [h.id, h.score])).toEqual([
      ['a', 1 / 61],
      ['b', 1 / 62],
    ]);
  });

  it('breaks ties deterministically by best rank, then id', () => {
    const fused = fuse([
      { ids: ['b', 'z'], weight: 1 },
      { ids: ['a', 'y'], weight: 1 },
    ]);
    expect(fused.map((h) => h.id)).toEqual(['a', 'b', 'y', 'z']);
  });

  it('handles no lists and empty lists, and rejects bad parameters', () => {
    expect(fuse([])).toEqual([]);
    expect(fuse([{ ids: [], weight: 1 }])).toEqual([]);
    expect(() => fuse([{ ids: ['a'], weight: -1 }])).toThrow(RangeError);
    expect(() => fuse([{ ids: ['a'], weight: Number.NaN }])).toThrow(RangeError);
    expect(() => fuse([{ ids: ['a'], weight: 1 }], -5)).toThrow(RangeError);
  });
});
