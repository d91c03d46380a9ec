import { type SQL, and, asc, desc, eq, gt, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { chunks, documents } from '../db/schema.js';
import { tagConditions } from '../db/tag-filter.js';
import { InvalidCursorError, decodeCursor, encodeCursor } from '../retrieval/cursor.js';
import { normalizeTags } from '../retrieval/tags.js';
import { chunkCountOf, documentColumns, findDocumentById, storedChunkColumns, toDocument } from './document-rows.js';
import type { Page, StoredChunk, StoredDocument } from './stored-document.js';

export interface DocumentFilter {
  tagsAny?: readonly string[] | undefined;
  tagsAll?: readonly string[] | undefined;
  tagsNone?: readonly string[] | undefined;
}

export interface ListDocumentsOptions extends DocumentFilter {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface ListChunksOptions {
  limit?: number | undefined;
  cursor?: string | undefined;
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
    const conditions: SQL[] = [
      ofTenant,
      ...tagConditions(documents.tags, {
        tagsAny: normalizeTags(opts.tagsAny),
        tagsAll: normalizeTags(opts.tagsAll),
        tagsNone: normalizeTags(opts.tagsNone),
      }),
    ];
    if (opts.cursor) {
      const { createdAt, id } = decodeCursor(opts.cursor);
      const at = sql`${createdAt}::timestamptz`;
      conditions.push(or(lt(documents.createdAt, at), and(eq(documents.createdAt, at), lt(documents.id, id)))!);
    }
    const rows = await db
      .select({ ...documentColumns, chunkCount: chunkCountOf, createdAtText: sql<string>`${documents.createdAt}::text` })
      .from(documents)
      .where(and(...conditions))
      .orderBy(desc(documents.createdAt), desc(documents.id))
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map(toDocument),
      nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAtText, id: last.id }) : null,
    };
  }

  async function listChunks(id: string, opts: ListChunksOptions = {}): Promise<Page<StoredChunk> | null> {
    const limit = opts.limit ?? 100;
    const after = opts.cursor === undefined ? -1 : decodeChunkCursor(opts.cursor);
    const [doc] = await db.select({ id: documents.id }).from(documents).where(and(ofTenant, eq(documents.id, id)));
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
    const [row] = await db.select({ text: documents.text }).from(documents).where(and(ofTenant, eq(documents.id, id)));
    return row?.text ?? null;
  }

  return { get: (id) => findDocumentById(db, tenantId, id), getText, list, chunks: listChunks };
}

function decodeChunkCursor(cursor: string): number {
  if (!/^\d{1,9}$/.test(cursor)) throw new InvalidCursorError();
  return Number(cursor);
}
