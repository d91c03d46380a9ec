import { describe, expect, it } from 'vitest';
import { favourByRank, favourTimeWindow } from '../../src/retrieval/time-window-boost.js';

const window = { from: new Date('2023-01-01T00:00:00Z'), to: new Date('2023-01-31T00:00:00Z'), text: 'in January' };
const hit = (id: string, score: number, at: string) => ({ id, score, at: new Date(at) });

describe('favourTimeWindow', () => {
  const hits = [hit('old', 1, '2022-06-01T00:00:00Z'), hit('jan', 0.8, '2023-01-15T00:00:00Z'), hit('feb', 0.7, '2023-02-15T00:00:00Z')];

  it('lifts the hits inside the window by the boost, and keeps the others in their order', () => {
    const ranked = favourTimeWindow(hits, (h) => h.at, window, 0.5);
    expect(ranked.map((h) => h.id)).toEqual(['jan', 'old', 'feb']);
    expect(ranked[0]!.score).toBeCloseTo(1.2);
  });

  it('changes nothing without a window or at a boost of 0', () => {
    expect(favourTimeWindow(hits, (h) => h.at, null)).toEqual(hits);
    expect(favourTimeWindow(hits, (h) => h.at, window, 0)).toEqual(hits);
  });

  it('raises a score below zero too', () => {
    const [only] = favourTimeWindow([hit('jan', -0.2, '2023-01-02T00:00:00Z')], (h) => h.at, window, 0.5);
    expect(only!.score).toBeCloseTo(-0.1);
  });
});

describe('favourByRank', () => {
  const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
  const ranked = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'].map((id) => ({ id }));

  it('moves a hit inside the window to its place divided by 1 + boost, no further', () => {
    // The 9th to 9 / 1.5 = 6th, ahead of the hit there; the 2nd to the 1st; the 12th to the 8th.
    expect(ids(favourByRank(ranked, (h) => h.id === 'i', 0.5)).slice(0, 8)).toEqual(['a', 'b', 'c', 'd', 'e', 'i', 'f', 'g']);
    expect(ids(favourByRank(ranked, (h) => h.id === 'b', 0.5)).slice(0, 3)).toEqual(['b', 'a', 'c']);
    expect(ids(favourByRank(ranked, (h) => h.id === 'l', 0.5)).indexOf('l')).toBe(7);
  });

  it('lifts every hit of a crowded window a few places, never all of them above the better hits outside it', () => {
    // A month's worth of candidates inside the window: the 2nd, outside it, stays among the first five.
    const outside = new Set(['a', 'b']);
    const order = ids(favourByRank(ranked, (h) => !outside.has(h.id), 0.5));
    expect(order.indexOf('b')).toBeLessThan(5);
    expect(order.indexOf('a')).toBeLessThan(3);
  });

  it('changes nothing at a boost of 0 or with no hit inside', () => {
    expect(favourByRank(ranked, () => true, 0)).toEqual(ranked);
    expect(favourByRank(ranked, () => false, 0.5)).toEqual(ranked);
    expect(favourByRank(ranked, () => true, 0.5)).toEqual(ranked);
  });
});
