import type { SQL } from 'drizzle-orm';
import type { Tx } from '../db/database.js';
import { AnalyzerMismatchError } from './analyzer-mismatch-error.js';
import type { Analyzer } from './bm25/analyzer.js';
import {
  type Bm25Document,
  addBm25Documents,
  adjustBm25Totals,
  deleteBm25Rows,
  lockBm25Corpus,
  removeBm25Postings,
  setBm25Analyzer,
} from './bm25/bm25-index.js';
import type { Corpus } from './corpus.js';

/** A row's terms as the analyzer indexes them. */
export type IndexedTerms = Omit<Bm25Document, 'id'>;

/**
 * The write side of a corpus's BM25 index, for its owner's transactions: every writer of a
 * tenant's rows takes `lock` first, which serialises them (postings, document frequencies and
 * totals move together, and term upserts never deadlock) and checks the analyzer.
 */
export interface CorpusIndex {
  lock(tx: Tx, tenantId: string, writingPostings: boolean): Promise<void>;
  termsOf(text: string): IndexedTerms;
  add(tx: Tx, tenantId: string, rows: readonly Bm25Document[]): Promise<void>;
  /** Takes the postings of the rows `rowIds` selects out of the index; the totals are the caller's. */
  removePostings(tx: Tx, tenantId: string, rowIds: SQL): Promise<void>;
  adjustTotals(tx: Tx, tenantId: string, rows: number, length: number): Promise<void>;
  /** Deletes the corpus's rows matching `where` with their postings and totals; returns how many went. */
  deleteRows(tx: Tx, tenantId: string, where: SQL): Promise<number>;
}

export function createCorpusIndex(corpus: Corpus, analyzer: Analyzer): CorpusIndex {
  const t = corpus.bm25;
  return {
    async lock(tx, tenantId, writingPostings) {
      const stats = await lockBm25Corpus(tx, t, tenantId, analyzer.id);
      if (!writingPostings || stats.analyzerId === analyzer.id) return;
      if (stats.total > 0) throw new AnalyzerMismatchError(stats.analyzerId, analyzer.id, corpus.reindexRemedy);
      await setBm25Analyzer(tx, t, tenantId, analyzer.id);
    },
    termsOf(text) {
      const termFrequencies = analyzer.termFrequencies(text);
      let length = 0;
      for (const tf of termFrequencies.values()) length += tf;
      return { termFrequencies, length };
    },
    add: (tx, tenantId, rows) => addBm25Documents(tx, t, tenantId, rows),
    removePostings: (tx, tenantId, rowIds) => removeBm25Postings(tx, t, tenantId, rowIds),
    adjustTotals: (tx, tenantId, rows, length) => adjustBm25Totals(tx, t, tenantId, rows, length),
    deleteRows: (tx, tenantId, where) => deleteBm25Rows(tx, t, tenantId, { table: corpus.table, idColumn: corpus.id, lengthColumn: corpus.bm25Length, where }),
  };
}
