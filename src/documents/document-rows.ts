import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { chunks, documents } from '../db/schema/index.js';
import type { DocumentFormat } from './parsers/document-format.js';
import type { StoredDocument } from './stored-document.js';

/** The columns of a `StoredDocument` but its chunk count, which a writer knows and a reader counts. */
export const documentColumns = {
  id: documents.id,
  title: documents.title,
  source: documents.source,
  format: documents.format,
  contentHash: documents.contentHash,
  tags: documents.tags,
  metadata: documents.metadata,
  textLength: sql<number>`char_length(${documents.text})`.as('text_length'),
  createdAt: documents.createdAt,
  updatedAt: documents.updatedAt,
};

// Spelt out: inside a single-table select, Drizzle would print the outer column unqualified.
// A document's chunks are its tenant's (copied at ingest), so counting by document id stays inside it.
export const chunkCountOf = sql<number>`(SELECT count(*)::int FROM "chunks" c WHERE c."document_id" = "documents"."id")`.as('chunk_count');

/** The columns of a `StoredChunk`. */
export const storedChunkColumns = {
  id: chunks.id,
  documentId: chunks.documentId,
  index: chunks.index,
  text: chunks.text,
  headingPath: chunks.headingPath,
  start: chunks.start,
  end: chunks.end,
  tokenCount: chunks.tokenCount,
};

export type DocumentRow = { [K in keyof typeof documentColumns]: unknown } & { chunkCount: unknown };

export const toDocument = (row: DocumentRow): StoredDocument => ({
  id: row.id as string,
  title: row.title as string,
  source: (row.source as string | null) ?? null,
  format: row.format as DocumentFormat,
  contentHash: row.contentHash as string,
  tags: row.tags as string[],
  metadata: row.metadata as Record<string, unknown>,
  textLength: Number(row.textLength),
  chunkCount: Number(row.chunkCount),
  createdAt: row.createdAt as Date,
  updatedAt: row.updatedAt as Date,
});

export async function findDocumentById(db: Db, tenantId: string, id: string): Promise<StoredDocument | null> {
  const [row] = await db
    .select({ ...documentColumns, chunkCount: chunkCountOf })
    .from(documents)
    .where(and(eq(documents.tenantId, tenantId), eq(documents.id, id)));
  return row ? toDocument(row) : null;
}

/** The tenant's document with this text, if any: identical text is stored once. */
export async function findDocumentByHash(db: Db, tenantId: string, contentHash: string): Promise<StoredDocument | null> {
  const [row] = await db
    .select({ ...documentColumns, chunkCount: chunkCountOf })
    .from(documents)
    .where(and(eq(documents.tenantId, tenantId), eq(documents.contentHash, contentHash)));
  return row ? toDocument(row) : null;
}
