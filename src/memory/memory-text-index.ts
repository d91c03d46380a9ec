import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { memories, memoryCorpusStats } from '../db/schema/index.js';
import { intArray, uuidArray } from '../db/sql-arrays.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { clearBm25Index, lockBm25Corpus, setBm25Analyzer } from '../retrieval/bm25/bm25-corpus.js';
import { MEMORY_BM25 } from '../retrieval/bm25/bm25-index-tables.js';
import { addBm25Documents } from '../retrieval/bm25/bm25-postings-write.js';
import { AnalyzerMismatchError } from '../retrieval/analyzer-mismatch-error.js';
import { MEMORY_REINDEX_REMEDY } from './memory-corpus.js';

export interface IndexMemoriesOptions {
  analyzer?: Analyzer;
  /** Memories per transaction. Default 500. */
  batchSize?: number;
  onProgress?: (indexed: number) => void;
}

export interface IndexMemoriesResult {
  /** Memories added to the BM25 index. */
  indexed: number;
  /** True when postings of another analyzer were dropped first, so every memory was re-indexed. */
  rebuilt: boolean;
}

/**
 * Brings the BM25 index of memories up to date, once at start, tenant by tenant (each tenant's
 * index is its own): memories saved before it existed (`bm25_length` NULL, as the migration
 * leaves them) are indexed, and postings written by another analyzer are dropped and rebuilt. The
 * analyzer is TypeScript, so a SQL migration cannot do this. Each batch is one transaction under
 * the tenant's corpus lock, so saves may run meanwhile and an interrupted run resumes where it
 * stopped; until it ends, text search misses the rest.
 */
export async function indexUnindexedMemories(db: Db, options: IndexMemoriesOptions = {}): Promise<IndexMemoriesResult> {
  const analyzer = options.analyzer ?? defaultAnalyzer;
  let rebuilt = false;
  const stale = await db.select({ tenantId: memoryCorpusStats.tenantId }).from(memoryCorpusStats).where(sql`${memoryCorpusStats.analyzerId} <> ${analyzer.id}`);
  for (const { tenantId } of stale) rebuilt = (await dropTenantIndex(db, tenantId, analyzer)) || rebuilt;

  const progress = { indexed: 0, onProgress: options.onProgress };
  // Read once: the tenants with unindexed memories now. Saves index what they write themselves.
  const tenants = await db.selectDistinct({ tenantId: memories.tenantId }).from(memories).where(isNull(memories.bm25Length));
  for (const { tenantId } of tenants) await indexTenant(db, tenantId, analyzer, options.batchSize ?? 500, progress);
  return { indexed: progress.indexed, rebuilt };
}

/** Drops a tenant's postings written by another analyzer, leaving its memories to be indexed again. */
async function dropTenantIndex(db: Db, tenantId: string, analyzer: Analyzer): Promise<boolean> {
  return db.transaction(async (tx) => {
    const corpus = await lockBm25Corpus(tx, MEMORY_BM25, tenantId, analyzer.id);
    if (corpus.analyzerId === analyzer.id) return false;
    // Unlike chunks, a memory's indexed text is its stored content: re-indexing needs no client.
    await clearBm25Index(tx, MEMORY_BM25, tenantId);
    await tx
      .update(memories)
      .set({ bm25Length: null })
      .where(and(eq(memories.tenantId, tenantId), isNotNull(memories.bm25Length)));
    await setBm25Analyzer(tx, MEMORY_BM25, tenantId, analyzer.id);
    return true;
  });
}

async function indexTenant(
  db: Db,
  tenantId: string,
  analyzer: Analyzer,
  batchSize: number,
  progress: { indexed: number; onProgress: ((indexed: number) => void) | undefined },
): Promise<void> {
  for (;;) {
    const done = await db.transaction(async (tx) => {
      const corpus = await lockBm25Corpus(tx, MEMORY_BM25, tenantId, analyzer.id);
      // Another process with another analyzer took over the index meanwhile: two cannot share it.
      if (corpus.analyzerId !== analyzer.id) throw new AnalyzerMismatchError(corpus.analyzerId, analyzer.id, MEMORY_REINDEX_REMEDY);
      // No row lock needed: every writer of the tenant's memories holds the corpus lock we hold.
      const rows = await tx
        .select({ id: memories.id, content: memories.content })
        .from(memories)
        .where(and(eq(memories.tenantId, tenantId), isNull(memories.bm25Length)))
        .orderBy(memories.id)
        .limit(batchSize);
      if (rows.length === 0) return 0;
      const documents = rows.map((r) => {
        const termFrequencies = analyzer.termFrequencies(r.content);
        let length = 0;
        for (const tf of termFrequencies.values()) length += tf;
        return { id: r.id, termFrequencies, length };
      });
      await addBm25Documents(tx, MEMORY_BM25, tenantId, documents);
      await tx.execute(sql`UPDATE memories m SET bm25_length = v.len
        FROM unnest(${uuidArray(documents.map((d) => d.id))}, ${intArray(documents.map((d) => d.length))}) AS v(id, len)
        WHERE m.tenant_id = ${tenantId} AND m.id = v.id`);
      return rows.length;
    });
    if (done === 0) return;
    progress.indexed += done;
    progress.onProgress?.(progress.indexed);
  }
}
