import { describe, expect, it } from 'vitest';
import { favourTimeWindow } from '../../src/retrieval/time-window-boost.js';

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
