import type { Db } from '../db/database.js';
import type { CorpusFilter } from './filter.js';

/**
 * A ranking signal's name. `vector` (cosine to the query's embedding) and `text` (BM25) are the
 * engine's own, run for every corpus; a corpus may declare more (`Corpus.signals`).
 */
export type SignalName = 'vector' | 'text' | (string & {});

/** 1-based rank of a unit in each signal's list, null where that signal did not return it. */
export type SignalRanks = Record<SignalName, number | null>;

/** What a corpus-declared signal ranks for: the search's query and filter, and how many units it may return. */
export interface SignalQuery {
  db: Db;
  query: string;
  filter: CorpusFilter;
  /** At most this many units (the search's candidates per side). */
  limit: number;
  abortSignal?: AbortSignal;
}

/**
 * A signal a corpus declares beside the engine's two: the ids of the units it favours for a
 * query, best first, within the filter. Only its ranks count (fused by weighted RRF), so it needs
 * no score on the other signals' scale.
 */
export type CorpusSignal = (query: SignalQuery) => Promise<readonly string[]>;
