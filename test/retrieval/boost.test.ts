import { describe, expect, it } from 'vitest';
import { type Boost, type GroupedRanking, type RankingStep, applyBoosts } from '../../src/retrieval/boost.js';

type Hit = { id: string; score: number; pinned?: boolean };
type Context = { pin: boolean };

const hits: Hit[] = [
  { id: 'a', score: 0.9 },
  { id: 'b', score: 0.8 },
  { id: 'c', score: 0.7 },
  { id: 'd', score: 0.2, pinned: true },
];
const ids = (list: readonly { id: string }[]) => list.map((h) => h.id);

const pinned = (kind: 'by place' | 'by score'): Boost<Hit, Context> => ({
  kind,
  name: 'pinned',
  weight: 1,
  favours: ({ pin }) => (pin ? (hit) => hit.pinned === true : null),
});
// A step that puts the hits in reverse order, to show where in the order a step runs.
const reverse: RankingStep<Hit, Context> = { kind: 'step', name: 'reverse', apply: (list) => [...list].reverse() };

describe('applyBoosts', () => {
  it('favours by place: the 4th rises to round(4 / 2) = the 2nd, scores unchanged', () => {
    const out = applyBoosts([pinned('by place')], hits, { pin: true });
    expect(ids(out)).toEqual(['a', 'd', 'b', 'c']);
    expect(out.find((h) => h.id === 'd')!.score).toBe(0.2);
  });

  it('favours by score: |score| × weight gained, then sorted by score', () => {
    const out = applyBoosts([pinned('by score')], hits, { pin: true }, { pinned: 4 });
    expect(ids(out)).toEqual(['d', 'a', 'b', 'c']);
    expect(out[0]!.score).toBeCloseTo(1, 12);
  });

  it('takes a weight by name over the declared one; 0, or no hit favoured in this search, leaves the order', () => {
    expect(ids(applyBoosts([pinned('by place')], hits, { pin: true }, { pinned: 3 }))).toEqual(['d', 'a', 'b', 'c']);
    expect(ids(applyBoosts([pinned('by place')], hits, { pin: true }, { pinned: 0 }))).toEqual(['a', 'b', 'c', 'd']);
    expect(ids(applyBoosts([pinned('by score')], hits, { pin: false }, { pinned: 4 }))).toEqual(['a', 'b', 'c', 'd']);
  });

  it('applies the declared steps and boosts in their order', () => {
    expect(ids(applyBoosts([reverse, pinned('by place')], hits, { pin: true }))).toEqual(['d', 'c', 'b', 'a']);
    expect(ids(applyBoosts([pinned('by place'), reverse], hits, { pin: true }))).toEqual(['c', 'b', 'd', 'a']);
  });

  it('groups the hits first when the ranking declares a grouping, then re-orders the groups', () => {
    type Group = { id: string; score: number; members: Hit[] };
    const byPin: GroupedRanking<Hit, Group, Context> = {
      group: {
        name: 'pin',
        apply: (list) =>
          [true, false].map((p) => {
            const members = list.filter((h) => (h.pinned === true) === p);
            return { id: p ? 'pinned' : 'rest', score: Math.max(...members.map((h) => h.score)), members };
          }),
      },
      steps: [{ kind: 'by score', name: 'rest', weight: 0, favours: () => (g) => g.id === 'rest' }],
    };
    expect(ids(applyBoosts(byPin, hits, { pin: true }))).toEqual(['pinned', 'rest']);
    expect(ids(applyBoosts(byPin, hits, { pin: true }, { rest: 1 }))).toEqual(['rest', 'pinned']);
  });
});
