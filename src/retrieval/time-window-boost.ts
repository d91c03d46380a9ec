import type { TimeWindow } from '../text/time-window.js';

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
  if (!window || boost === 0) return [...hits];
  // Scores may be cosine similarities below zero: the gain is on the magnitude, so it always helps.
  const boosted = hits.map((hit) => (insideTimeWindow(dateOf(hit), window) ? { ...hit, score: hit.score + Math.abs(hit.score) * boost } : hit));
  return boosted.sort((a, b) => b.score - a.score);
}

/** Whether a moment falls inside the window, both ends included. */
export function insideTimeWindow(at: Date, window: TimeWindow): boolean {
  return at.getTime() >= window.from.getTime() && at.getTime() <= window.to.getTime();
}
