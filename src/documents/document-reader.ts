import { and, asc, desc, eq, gt } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { chunks, documents } from '../db/schema/index.js';
import { InvalidCursorError } from '../retrieval/cursor.js';
import { type TagFilterInput, normalizeTagFilter } from '../retrieval/filter.js';
import { tagConditions } from '../retrieval/filter-sql.js';
import { afterCursor, createdAtText, keysetPage } from '../retrieval/keyset-page.js';
import type { Page } from '../retrieval/page.js';
import { chunkCountOf, documentColumns, findDocumentById, storedChunkColumns, toDocument } from './document-rows.js';
import type { StoredChunk, StoredDocument } from './stored-document.js';

export interface ListDocumentsOptions extends TagFilterInput {
  limit?: number;
  cursor?: string;
}

export interface ListChunksOptions {
  limit?: number;
  cursor?: string;
}

/** The reading half of a `DocumentStore`: one tenant's documents, their text and chunks. */
export interface DocumentReader {
  get(id: string): Promise<StoredDocument | null>;
  /** The extracted text the chunk offsets refer to. */
  getText(id: string): Promise<string | null>;
  list(options?: ListDocumentsOptions): Promise<Page<StoredDocument>>;
  /** The document's chunks in order; `null` when there is no such document. */
  chunks(id: string, options?: ListChunksOptions): Promise<Page<StoredChunk> | null>;
}

export function createDocumentReader({ db, tenantId }: { db: Db; tenantId: string }): DocumentReader {
  const ofTenant = eq(documents.tenantId, tenantId);

  async function list(opts: ListDocumentsOptions = {}): Promise<Page<StoredDocument>> {
    const limit = opts.limit ?? 50;
    const rows = await db
      .select({ ...documentColumns, chunkCount: chunkCountOf, createdAtText: createdAtText(documents) })
      .from(documents)
      .where(and(ofTenant, ...tagConditions(documents.tags, normalizeTagFilter(opts)), afterCursor(opts.cursor, documents)))
      .orderBy(desc(documents.createdAt), desc(documents.id))
      .limit(limit + 1);
    return keysetPage(rows, limit, toDocument);
  }

  async function listChunks(id: string, opts: ListChunksOptions = {}): Promise<Page<StoredChunk> | null> {
    const limit = opts.limit ?? 100;
    const after = opts.cursor === undefined ? -1 : decodeChunkCursor(opts.cursor);
    const [doc] = await db
      .select({ id: documents.id })
      .from(documents)
      .where(and(ofTenant, eq(documents.id, id)));
    if (!doc) return null;
    const rows = await db
      .select(storedChunkColumns)
      .from(chunks)
      .where(and(eq(chunks.tenantId, tenantId), eq(chunks.documentId, id), gt(chunks.index, after)))
      .orderBy(asc(chunks.index))
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page, nextCursor: rows.length > limit && last ? String(last.index) : null };
  }

  async function getText(id: string): Promise<string | null> {
    const [row] = await db
      .select({ text: documents.text })
      .from(documents)
      .where(and(ofTenant, eq(documents.id, id)));
    return row?.text ?? null;
  }

  return { get: (id) => findDocumentById(db, tenantId, id), getText, list, chunks: listChunks };
}

function decodeChunkCursor(cursor: string): number {
  if (!/^\d{1,9}$/.test(cursor)) throw new InvalidCursorError();
  return Number(cursor);
}
