import type { SQL } from 'drizzle-orm';
import type { Db, Tx } from '../db/database.js';
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
import { SerialLanes } from '../util/serial-lanes.js';
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
  /**
   * `work` in a transaction that takes `lock` first, queued in this process behind the tenant's
   * other writers of this corpus before the transaction starts. Writers that would only wait for
   * the lock wait here instead, without holding a pooled connection that a search could use; the
   * lock still serialises them against other processes.
   */
  write<T>(db: Db, tenantId: string, writingPostings: boolean, work: (tx: Tx) => Promise<T>): Promise<T>;
  termsOf(text: string): IndexedTerms;
  add(tx: Tx, tenantId: string, rows: readonly Bm25Document[]): Promise<void>;
  /** Takes the postings of the rows `rowIds` selects out of the index; the totals are the caller's. */
  removePostings(tx: Tx, tenantId: string, rowIds: SQL): Promise<void>;
  adjustTotals(tx: Tx, tenantId: string, rows: number, length: number): Promise<void>;
  /** Deletes the corpus's rows matching `where` with their postings and totals; returns how many went. */
  deleteRows(tx: Tx, tenantId: string, where: SQL): Promise<number>;
}

/** Per database handle: every store of a corpus and tenant on it shares one lane. */
const writerLanes = new WeakMap<Db, SerialLanes>();

export function createCorpusIndex(corpus: Corpus, analyzer: Analyzer): CorpusIndex {
  const t = corpus.bm25;
  async function lock(tx: Tx, tenantId: string, writingPostings: boolean): Promise<void> {
    const stats = await lockBm25Corpus(tx, t, tenantId, analyzer.id);
    if (!writingPostings || stats.analyzerId === analyzer.id) return;
    if (stats.total > 0) throw new AnalyzerMismatchError(stats.analyzerId, analyzer.id, corpus.reindexRemedy);
    await setBm25Analyzer(tx, t, tenantId, analyzer.id);
  }
  return {
    lock,
    write(db, tenantId, writingPostings, work) {
      let lanes = writerLanes.get(db);
      if (!lanes) writerLanes.set(db, (lanes = new SerialLanes()));
      return lanes.run(`${t.corpusStats}\u0000${tenantId}`, () =>
        db.transaction(async (tx) => {
          await lock(tx, tenantId, writingPostings);
          return work(tx);
        }),
      );
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
