import type { TimeWindow } from '../text/time-window.js';
import { type Boost, type BoostKind, favourByRank as favourPlaces, favourByScore } from './boost.js';

/**
 * What a hit dated inside the query's time window gains: its score times (1 + boost). A boost and
 * not a filter: people date what they did loosely ("a week ago" of something said nine days
 * before), and a chat log dates when a thing was said, not when it happened. On LongMemEval's
 * tuning part (`npm run bench:longmemeval` with BENCH_TUNE) 0.5 changed no figure against 0, where
 * 3 lost 0.07 of temporal-reasoning's session R_all@5: the questions there date events, not the
 * sessions that tell them. 0.5 lifts a turn said then above its neighbours in score, not above a
 * clearly better match.
 */
export const TIME_WINDOW_BOOST = 0.5;

/** Candidates a search with a time window ranks before the boost re-orders them: enough to lift a hit from a few pages down. */
export const TIME_WINDOW_CANDIDATES = 50;

/** The hits re-ranked with those dated inside `window` favoured; the rest keep their order. */
export function favourTimeWindow<T extends { score: number }>(
  hits: readonly T[],
  dateOf: (hit: T) => Date,
  window: TimeWindow | null,
  boost = TIME_WINDOW_BOOST,
): T[] {
  if (!window) return [...hits];
  return favourByScore(hits, (hit) => insideTimeWindow(dateOf(hit), window), boost);
}

/**
 * What a hit said inside the query's time window gains in a ranking fused from ranks (turns and
 * conversations): from place p it rises to place round(p / (1 + boost)), ahead of the hit there,
 * so the 2nd and 3rd rise one place, the 9th three, the 30th ten. On rank-fused scores a gain on
 * the score acts as a filter: they lie close together (a hybrid turn list's first and twelfth
 * within 15%), and a window as wide as a month would lift every candidate in it above the evidence
 * said outside it that a comparison needs (test/conversations/episodic-recall-regressions.test.ts).
 * By place, a hit outside the window falls to about 1.5 times its place at most: the 2nd to the
 * 3rd, the 3rd to the 5th. On LongMemEval's tuning part (docs/benchmarks/longmemeval.md) 0, 0.5
 * and 1 gave the same figures; 2 won one evidence turn back and lets the 2nd fall to the 7th.
 */
export const TIME_WINDOW_RANK_BOOST = 0.5;

/** The hits re-ordered with those `inside` the window favoured by place (see TIME_WINDOW_RANK_BOOST); scores are left as they were. */
export function favourByRank<T>(hits: readonly T[], inside: (hit: T) => boolean, boost = TIME_WINDOW_RANK_BOOST): T[] {
  return favourPlaces(hits, inside, boost);
}

/** What a search's time-window boost reads: the window the query names (null: none). */
export interface TimeWindowContext {
  timeWindow: TimeWindow | null;
}

/**
 * The `timeWindow` boost of a corpus: the hits `inside` the query's window favoured, by score
 * (weight TIME_WINDOW_BOOST) or by place (TIME_WINDOW_RANK_BOOST); nothing without a window.
 */
export function timeWindowBoost<Hit>(kind: BoostKind, inside: (hit: Hit, window: TimeWindow) => boolean): Boost<Hit, TimeWindowContext> {
  return {
    kind,
    name: 'timeWindow',
    weight: kind === 'by score' ? TIME_WINDOW_BOOST : TIME_WINDOW_RANK_BOOST,
    favours: ({ timeWindow }) => (timeWindow ? (hit) => inside(hit, timeWindow) : null),
  };
}

/** Whether a moment falls inside the window, both ends included. */
export function insideTimeWindow(at: Date, window: TimeWindow): boolean {
  return at.getTime() >= window.from.getTime() && at.getTime() <= window.to.getTime();
}
