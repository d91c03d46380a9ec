import type { SQL, SQLWrapper } from 'drizzle-orm';
import { type ConnectionRelay, createConnectionRelay } from '../db/connection-relay.js';
import type { Db, Tx } from '../db/database.js';
import { KeyedConcurrencyLimit } from '../util/keyed-concurrency-limit.js';
import { isTransactionConflict } from '../util/transaction-conflict.js';
import { AnalyzerMismatchError } from './analyzer-mismatch-error.js';
import type { Analyzer } from './bm25/analyzer.js';
import { type Bm25Changes, applyBm25Changes, deferBm25Write, noBm25Changes } from './bm25/bm25-changes.js';
import { bm25CorpusShare, lockBm25Corpus, setBm25Analyzer, shareBm25Corpus } from './bm25/bm25-corpus.js';
import { type Bm25Document, addBm25Documents, adjustBm25Totals, removeBm25Postings, replaceBm25Document } from './bm25/bm25-postings-write.js';
import { deleteBm25Rows } from './bm25/bm25-row-deletes.js';
import type { Corpus } from './corpus.js';

/** A row's terms as the analyzer indexes them. */
export type IndexedTerms = Omit<Bm25Document, 'id'>;

/** How a `write` transaction runs. */
export interface CorpusWriteOptions {
  /** Rows it writes: more than one runs it alone (see `write`). */
  rows?: number;
  /**
   * Its work's first statement takes the corpus shared, as `firstLock` gives it, before its own
   * locks: a round trip fewer while the writer holds its place in the lane. Whatever the work
   * runs through the index before then throws.
   */
  sharedByFirstStatement?: boolean;
}

/**
 * The write side of a corpus's BM25 index, for its owner's transactions. Writers of postings
 * (`write` with `writingPostings`) run side by side: each holds the tenant's corpus shared,
 * keeps its totals to itself until its last statement, and is run again when it deadlocks with
 * another. Every other writer (`lock`, and `write` without postings) holds the corpus alone, as
 * does whatever changes it as a whole (`lockBm25Corpus`). Either way the postings, document
 * frequencies and totals are exact once writers commit.
 */
export interface CorpusIndex {
  /** Holds the tenant's corpus alone for the rest of `tx`, checking the analyzer; nothing when `tx` is `write`'s own. */
  lock(tx: Tx, tenantId: string, writingPostings: boolean): Promise<void>;
  /**
   * `work` in a transaction of its own holding the corpus (see the interface). With
   * `writingPostings`, `work` must be safe to run again: after a deadlock or a concurrent insert
   * of the same key its transaction is rolled back and run anew, a few times at most. At most
   * `MAX_TENANT_WRITERS` of a tenant's writers of the corpus hold a pooled connection at once in
   * this process; the others wait for one here, leaving the pool to searches. A writer of many
   * `rows` (a batch: its row inserts lock the tenant's filter counts one by one, and would take
   * them in turns with another batch) or one holding the corpus alone runs alone in the process,
   * so that it waits here rather than on a lock inside a statement, where the statement timeout runs.
   */
  write<T>(db: Db, tenantId: string, writingPostings: boolean, work: (tx: Tx) => Promise<T>, options?: CorpusWriteOptions): Promise<T>;
  /**
   * For the first statement of a `write` transaction with `sharedByFirstStatement`: a condition
   * (an uncorrelated subquery, run once before the statement reads a row) that takes the corpus
   * shared, to be evaluated before the statement's own locks. Undefined when `tx` holds the corpus
   * already (that transaction's run holds it alone, or it is not such a transaction).
   */
  firstLock(tx: Tx): SQL | undefined;
  termsOf(text: string): IndexedTerms;
  add(tx: Tx, tenantId: string, rows: readonly Bm25Document[]): Promise<void>;
  /**
   * Indexes a row's new text in place of what was indexed of it: `previousLength` as its length
   * column held it (null: not indexed). Postings, frequencies and totals.
   */
  replace(tx: Tx, tenantId: string, row: Bm25Document, previousLength: number | null): Promise<void>;
  /** Takes the postings of the rows `rowIds` selects out of the index; the totals are the caller's. */
  removePostings(tx: Tx, tenantId: string, rowIds: SQL): Promise<void>;
  adjustTotals(tx: Tx, tenantId: string, rows: number, length: number): Promise<void>;
  /** Deletes the corpus's rows matching `where` with their postings and totals; returns how many went. */
  deleteRows(tx: Tx, tenantId: string, where: SQL): Promise<number>;
  /**
   * Runs `write`, whose result nothing later in `tx` reads, as part of the last statement of a
   * `write` transaction (a round trip fewer while the writer holds its place in the lane), or at
   * once in any other transaction. Held-back postings go the same way.
   */
  deferWrite(tx: Tx, write: SQLWrapper): Promise<void>;
}

/**
 * A tenant's writers of one corpus holding connections at once, per process: beyond a few, they
 * mostly wait on each other's term rows, and a pool of 10 keeps room for searches.
 */
export const MAX_TENANT_WRITERS = 4;
/** Runs of a sharing writer's transaction, its first included, before its conflict is its caller's. */
const MAX_WRITE_RUNS = 5;

/** A `write` transaction's changes to the frequencies and totals, applied by its last statement. */
interface Pending extends Bm25Changes {
  /** Whether it wrote postings: the analyzer is checked with the totals. */
  wrotePostings: boolean;
  /** The corpus share its work's first statement is to take (`firstLock`); null once taken or when taken for it. */
  shareDue: SQL | null;
}

/** `write`'s transactions, each with its pending changes; transactions that took `lock` are not here. */
const writeTransactions = new WeakMap<Tx, Pending>();

/** Thrown inside a sharing writer's transaction to roll it back and run it holding the corpus alone. */
class NeedsCorpusAlone extends Error {}

/** Per database handle: every store of a corpus and tenant on it shares one lane, and its connections. */
const writerLanes = new WeakMap<Db, { limit: KeyedConcurrencyLimit; relay: ConnectionRelay }>();

export function createCorpusIndex(corpus: Corpus, analyzer: Analyzer): CorpusIndex {
  const t = corpus.bm25;
  async function lockAlone(tx: Tx, tenantId: string, writingPostings: boolean): Promise<void> {
    const stats = await lockBm25Corpus(tx, t, tenantId, analyzer.id);
    if (!writingPostings || stats.analyzerId === analyzer.id) return;
    if (stats.total > 0) throw new AnalyzerMismatchError(stats.analyzerId, analyzer.id, corpus.reindexRemedy);
    await setBm25Analyzer(tx, t, tenantId, analyzer.id);
  }
  /** The pending changes of `tx`, which must hold the corpus by now. */
  function pendingOf(tx: Tx): Pending | undefined {
    const pending = writeTransactions.get(tx);
    if (pending?.shareDue) throw new Error('a write transaction with sharedByFirstStatement ran index work before its first statement took the corpus');
    return pending;
  }
  /**
   * `work` in a transaction that holds the corpus, with its changes applied last; shared, by a
   * statement of its own or by the work's first one (`shareLater`).
   */
  function transaction<T>(db: Db, tenantId: string, shared: boolean, writingPostings: boolean, work: (tx: Tx) => Promise<T>, shareLater = false): Promise<T> {
    return db.transaction(async (tx) => {
      if (shared && !shareLater) await shareBm25Corpus(tx, t, tenantId);
      else if (!shared) await lockAlone(tx, tenantId, writingPostings);
      const pending: Pending = { ...noBm25Changes(), wrotePostings: false, shareDue: shared && shareLater ? bm25CorpusShare(t, tenantId) : null };
      writeTransactions.set(tx, pending);
      const result = await work(tx);
      pendingOf(tx);
      const applied = await applyBm25Changes(tx, t, tenantId, pending, pending.wrotePostings ? analyzer.id : undefined);
      // The tenant's first postings, or another analyzer's: created or checked holding the corpus alone.
      if (!applied && shared) throw new NeedsCorpusAlone();
      return result;
    });
  }
  async function shared<T>(db: Db, tenantId: string, work: (tx: Tx) => Promise<T>, shareLater: boolean): Promise<T> {
    for (let run = 1; ; run++) {
      try {
        return await transaction(db, tenantId, true, true, work, shareLater);
      } catch (err) {
        if (err instanceof NeedsCorpusAlone) return transaction(db, tenantId, false, true, work);
        if (run < MAX_WRITE_RUNS && isTransactionConflict(err)) continue;
        throw err;
      }
    }
  }
  return {
    async lock(tx, tenantId, writingPostings) {
      const pending = pendingOf(tx);
      if (!pending) return lockAlone(tx, tenantId, writingPostings);
      if (writingPostings) pending.wrotePostings = true;
    },
    write(db, tenantId, writingPostings, work, { rows = 1, sharedByFirstStatement = false } = {}) {
      let lane = writerLanes.get(db);
      if (!lane) writerLanes.set(db, (lane = { limit: new KeyedConcurrencyLimit(MAX_TENANT_WRITERS), relay: createConnectionRelay(db) }));
      const { limit, relay } = lane;
      const key = `${t.corpusStats}/${tenantId}`;
      const alone = !writingPostings || rows > 1;
      return limit.run(
        key,
        () =>
          relay.run(
            key,
            (conn) => (writingPostings ? shared(conn, tenantId, work, sharedByFirstStatement) : transaction(conn, tenantId, false, false, work)),
            () => limit.waiting(key),
          ),
        alone ? MAX_TENANT_WRITERS : 1,
      );
    },
    firstLock(tx) {
      const pending = writeTransactions.get(tx);
      const due = pending?.shareDue ?? undefined;
      if (pending) pending.shareDue = null;
      return due;
    },
    termsOf(text) {
      const termFrequencies = analyzer.termFrequencies(text);
      let length = 0;
      for (const tf of termFrequencies.values()) length += tf;
      return { termFrequencies, length };
    },
    async add(tx, tenantId, rows) {
      const pending = pendingOf(tx);
      if (pending && rows.length > 0) pending.wrotePostings = true;
      await addBm25Documents(tx, t, tenantId, rows, pending);
    },
    async replace(tx, tenantId, row, previousLength) {
      const pending = pendingOf(tx);
      if (pending) pending.wrotePostings = true;
      await replaceBm25Document(tx, t, tenantId, row, previousLength, pending);
    },
    removePostings: (tx, tenantId, rowIds) => removeBm25Postings(tx, t, tenantId, rowIds, pendingOf(tx)),
    async adjustTotals(tx, tenantId, rows, length) {
      const pending = pendingOf(tx);
      if (!pending) return adjustBm25Totals(tx, t, tenantId, rows, length);
      pending.documents += rows;
      pending.length += length;
    },
    deleteRows: (tx, tenantId, where) =>
      deleteBm25Rows(tx, t, tenantId, { table: corpus.table, idColumn: corpus.id, lengthColumn: corpus.bm25Length, where }, pendingOf(tx)),
    async deferWrite(tx, write) {
      const pending = pendingOf(tx);
      if (pending) await deferBm25Write(tx, pending, write.getSQL());
      else await tx.execute(write.getSQL());
    },
  };
}
