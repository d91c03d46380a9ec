import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/database.js';
import { chunks, documents } from '../../db/schema/index.js';
import type { Analyzer } from '../../retrieval/bm25/analyzer.js';
import { type CorpusIndex, createCorpusIndex } from '../../retrieval/corpus-index.js';
import { documentColumns, findDocumentByHash, toDocument } from '../document-rows.js';
import { PASSAGE_CORPUS } from '../passage-corpus.js';
import type { PreparedChunk } from '../prepare-chunks.js';
import type { IngestResult } from '../stored-document.js';
import type { EmbeddedDocument } from './embed-stage.js';

export interface WriteStageOptions {
  db: Db;
  tenantId: string;
  /** The analyzer the chunks' passage terms were made with: postings of two analyzers never mix. */
  analyzer: Analyzer;
  /** Checked once, before the transaction starts; a write under way is not interrupted. */
  signal?: AbortSignal;
  /**
   * Runs inside the write's transaction, after it: what must commit with the document or not at
   * all (a job marking itself done, so that a retried job never writes twice). Throwing rolls back.
   */
  inTransaction?: (tx: Db, result: IngestResult) => Promise<void>;
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
  const index = createCorpusIndex(PASSAGE_CORPUS, analyzer);

  return db.transaction(async (tx) => {
    // Serialises the tenant's writers of postings and statistics, and checks their analyzer.
    await index.lock(tx, tenantId, true);
    // Another writer may have stored the same text while we embedded.
    const raced = await findDocumentByHash(tx, tenantId, contentHash);
    if (raced) {
      const result = { document: raced, status: 'unchanged' as const };
      await options.inTransaction?.(tx, result);
      return result;
    }

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
      await removeDocumentChunks(tx, index, tenantId, previous!.id);
      [row] = await tx
        .update(documents)
        .set({ title, contentHash, format, tags, metadata, text, passageTokens, updatedAt: sql`now()` })
        .where(and(ofTenant, eq(documents.id, previous!.id)))
        .returning(documentColumns);
    }
    const stored = toDocument({ ...row!, chunkCount: document.chunks.length });
    await insertChunks(tx, index, tenantId, stored.id, tags, document.chunks, document.vectors);
    const result = { document: stored, status };
    await options.inTransaction?.(tx, result);
    return result;
  });
}

/** Deletes a document's chunks and postings, taking its passages out of the BM25 statistics; the corpus lock is the caller's. */
export async function removeDocumentChunks(tx: Tx, index: CorpusIndex, tenantId: string, documentId: string): Promise<void> {
  await index.deleteRows(tx, tenantId, and(eq(chunks.tenantId, tenantId), eq(chunks.documentId, documentId))!);
}

async function insertChunks(
  tx: Tx,
  index: CorpusIndex,
  tenantId: string,
  documentId: string,
  tags: string[],
  prepared: PreparedChunk[],
  vectors: number[][],
): Promise<void> {
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
  await index.add(
    tx,
    tenantId,
    prepared.flatMap((c, i) => (c.passageTerms ? [{ id: ids[i]!, termFrequencies: c.passageTerms.termFrequencies, length: c.passageTerms.length }] : [])),
  );
}
