import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { turnCorpusStats, turns } from '../db/schema/index.js';
import { intArray, uuidArray } from '../db/sql-arrays.js';
import { AnalyzerMismatchError } from '../retrieval/analyzer-mismatch-error.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { clearBm25Index, lockBm25Corpus, setBm25Analyzer } from '../retrieval/bm25/bm25-corpus.js';
import { TURN_BM25 } from '../retrieval/bm25/bm25-index-tables.js';
import { addBm25Documents } from '../retrieval/bm25/bm25-postings-write.js';
import { TURN_REINDEX_REMEDY, turnKeysAnalyzer } from './turn-corpus.js';
import { turnBm25Text } from './turn-record.js';

export interface ReindexTurnsOptions {
  analyzer?: Analyzer;
  /** Turns per transaction. Default 500. */
  batchSize?: number;
}

/**
 * Rebuilds, once at start, the BM25 index of turns of each tenant whose postings another analyzer
 * wrote (an analyzer changes with a release, and a SQL migration cannot run it). A turn's indexed
 * text is in its row (`embedded_text` and `after`), so nothing is re-embedded. Turns are always
 * written with their postings, so, unlike memories, there are no turns indexed by none. Each batch
 * is one transaction under the tenant's corpus lock: an interrupted run resumes where it stopped.
 * Returns how many turns were indexed again.
 */
export async function reindexStaleTurns(db: Db, options: ReindexTurnsOptions = {}): Promise<number> {
  const analyzer = turnKeysAnalyzer(options.analyzer ?? defaultAnalyzer);
  const batchSize = options.batchSize ?? 500;
  const stale = await db.select({ tenantId: turnCorpusStats.tenantId }).from(turnCorpusStats).where(sql`${turnCorpusStats.analyzerId} <> ${analyzer.id}`);
  for (const { tenantId } of stale) {
    await db.transaction(async (tx) => {
      const corpus = await lockBm25Corpus(tx, TURN_BM25, tenantId, analyzer.id);
      if (corpus.analyzerId === analyzer.id) return;
      // One statement marks every turn of the tenant to index again, and at scale it outlasts the
      // statement timeout meant for requests (21k turns: every row rewritten with its index entries).
      await tx.execute(sql`SET LOCAL statement_timeout = 0`);
      await clearBm25Index(tx, TURN_BM25, tenantId);
      await tx
        .update(turns)
        .set({ bm25Length: null })
        .where(and(eq(turns.tenantId, tenantId), isNotNull(turns.bm25Length)));
      await setBm25Analyzer(tx, TURN_BM25, tenantId, analyzer.id);
    });
  }
  // Also the tenants an interrupted rebuild left half done.
  const tenants = await db.selectDistinct({ tenantId: turns.tenantId }).from(turns).where(isNull(turns.bm25Length));
  let indexed = 0;
  for (const { tenantId } of tenants) {
    for (;;) {
      const done = await db.transaction(async (tx) => {
        const corpus = await lockBm25Corpus(tx, TURN_BM25, tenantId, analyzer.id);
        if (corpus.analyzerId !== analyzer.id) throw new AnalyzerMismatchError(corpus.analyzerId, analyzer.id, TURN_REINDEX_REMEDY);
        const rows = await tx
          .select({ id: turns.id, at: turns.at, before: turns.before, question: turns.question, answer: turns.answer, after: turns.after, facts: turns.facts })
          .from(turns)
          .where(and(eq(turns.tenantId, tenantId), isNull(turns.bm25Length)))
          .orderBy(turns.id)
          .limit(batchSize);
        if (rows.length === 0) return 0;
        const documents = rows.map((r) => {
          const termFrequencies = analyzer.termFrequencies(turnBm25Text(r));
          let length = 0;
          for (const tf of termFrequencies.values()) length += tf;
          return { id: r.id, termFrequencies, length };
        });
        await addBm25Documents(tx, TURN_BM25, tenantId, documents);
        await tx.execute(sql`UPDATE turns t SET bm25_length = v.len
          FROM unnest(${uuidArray(documents.map((d) => d.id))}, ${intArray(documents.map((d) => d.length))}) AS v(id, len)
          WHERE t.tenant_id = ${tenantId} AND t.id = v.id`);
        return rows.length;
      });
      if (done === 0) break;
      indexed += done;
    }
  }
  return indexed;
}
