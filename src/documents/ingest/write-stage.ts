import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { CHUNK_BM25, addBm25Documents, lockBm25Corpus, removeBm25Postings, setBm25Analyzer } from '../../db/bm25-index.js';
import { chunks, documents } from '../../db/schema.js';
import type { Analyzer } from '../../retrieval/bm25/analyzer.js';
import { AnalyzerMismatchError } from '../analyzer-mismatch-error.js';
import { documentColumns, findDocumentByHash, toDocument } from '../document-rows.js';
import type { PreparedChunk } from '../prepare-chunks.js';
import type { IngestResult } from '../stored-document.js';
import type { EmbeddedDocument } from './embed-stage.js';

export interface WriteStageOptions {
  db: Db;
  tenantId: string;
  /** The analyzer the chunks' passage terms were made with: postings of two analyzers never mix. */
  analyzer: Analyzer;
  /** Checked once, before the transaction starts; a write under way is not interrupted. */
  signal?: AbortSignal | undefined;
}

// Rows per multi-row statement: far below the 65,535 bind parameters of the protocol.
const INSERT_BATCH = 500;

/**
 * Stage 5: the document, its chunks and their postings, in one transaction. It is `unchanged`
 * when identical text was stored while this one was being embedded; with a `source` that is stored
 * already, that document is `replaced` (same id, new chunks); else it is `created`.
 */
export async function writeStage(document: EmbeddedDocument, options: WriteStageOptions): Promise<IngestResult> {
  const { db, tenantId, analyzer } = options;
  if (document.vectors.length !== document.chunks.length) {
    throw new Error(`${document.vectors.length} vectors for ${document.chunks.length} chunks: the embed stage did not finish`);
  }
  options.signal?.throwIfAborted();
  const { title, source, contentHash, format, tags, metadata, text, passageTokens } = document;
  const ofTenant = eq(documents.tenantId, tenantId);

  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    await lockChunkCorpus(tx, tenantId, analyzer, true);
    // Another writer may have stored the same text while we embedded.
    const raced = await findDocumentByHash(tx, tenantId, contentHash);
    if (raced) return { document: raced, status: 'unchanged' as const };

    // Inserted unless this source is stored already: one statement for a new document.
    let status: IngestResult['status'] = 'created';
    let [row] = await tx
      .insert(documents)
      .values({ id: randomUUID(), tenantId, title, source, contentHash, format, tags, metadata, text, passageTokens })
      .onConflictDoNothing({ target: [documents.tenantId, documents.source] })
      .returning(documentColumns);
    if (!row) {
      status = 'replaced';
      const [previous] = await tx
        .select({ id: documents.id })
        .from(documents)
        .where(and(ofTenant, eq(documents.source, source!)))
        .for('update');
      await removeDocumentChunks(tx, tenantId, previous!.id);
      [row] = await tx
        .update(documents)
        .set({ title, contentHash, format, tags, metadata, text, passageTokens, updatedAt: sql`now()` })
        .where(and(ofTenant, eq(documents.id, previous!.id)))
        .returning(documentColumns);
    }
    const stored = toDocument({ ...row!, chunkCount: document.chunks.length });
    await insertChunks(tx, tenantId, stored.id, tags, document.chunks, document.vectors);
    return { document: stored, status };
  });
}

/**
 * Takes the tenant's corpus statistics row lock, which serialises every writer of its postings
 * and statistics (so their upserts never deadlock), and checks the analyzer of its postings.
 */
export async function lockChunkCorpus(tx: Db, tenantId: string, analyzer: Analyzer, writingPostings: boolean): Promise<void> {
  const corpus = await lockBm25Corpus(tx, CHUNK_BM25, tenantId, analyzer.id);
  if (!writingPostings || corpus.analyzerId === analyzer.id) return;
  if (corpus.total > 0) throw new AnalyzerMismatchError(corpus.analyzerId, analyzer.id);
  await setBm25Analyzer(tx, CHUNK_BM25, tenantId, analyzer.id);
}

/** Deletes a document's chunks and postings, taking its passages out of the BM25 statistics. */
export async function removeDocumentChunks(tx: Db, tenantId: string, documentId: string): Promise<void> {
  await removeBm25Postings(tx, CHUNK_BM25, tenantId, sql`SELECT id FROM chunks WHERE tenant_id = ${tenantId} AND document_id = ${documentId}`);
  await tx.execute(sql`
      WITH gone AS (DELETE FROM chunks WHERE tenant_id = ${tenantId} AND document_id = ${documentId} RETURNING bm25_length)
      UPDATE corpus_stats SET
        total_chunks = total_chunks - (SELECT count(bm25_length) FROM gone),
        total_length = total_length - (SELECT coalesce(sum(bm25_length), 0) FROM gone)
      WHERE tenant_id = ${tenantId}`);
}

async function insertChunks(tx: Db, tenantId: string, documentId: string, tags: string[], prepared: PreparedChunk[], vectors: number[][]): Promise<void> {
  const ids = prepared.map(() => randomUUID());
  for (let i = 0; i < prepared.length; i += INSERT_BATCH) {
    await tx.insert(chunks).values(
      prepared.slice(i, i + INSERT_BATCH).map((c, j) => ({
        id: ids[i + j]!,
        tenantId,
        documentId,
        index: c.index,
        text: c.text,
        context: c.context,
        headingPath: c.headingPath,
        start: c.start,
        end: c.end,
        tokenCount: c.tokenCount,
        passageId: ids[c.passage]!,
        bm25Length: c.passageTerms?.length ?? null,
        embedding: vectors[i + j]!,
        tags,
      })),
    );
  }
  await addBm25Documents(
    tx,
    CHUNK_BM25,
    tenantId,
    prepared.flatMap((c, i) => (c.passageTerms ? [{ id: ids[i]!, termFrequencies: c.passageTerms.termFrequencies, length: c.passageTerms.length }] : [])),
  );
}
