import { createHash, randomUUID } from 'node:crypto';
import { type SQL, and, asc, desc, eq, gt, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { CHUNK_BM25, addBm25Documents, lockBm25Corpus, removeBm25Postings, setBm25Analyzer } from '../db/bm25-index.js';
import { chunks, documents } from '../db/schema.js';
import { AnalyzerMismatchError } from '../retrieval/analyzer-mismatch-error.js';
import { tagConditions } from '../retrieval/filter-sql.js';
import type { Page } from '../retrieval/page.js';
import type { Embedder } from '../embeddings/embedder.js';
import { InvalidCursorError, decodeCursor, encodeCursor } from '../retrieval/cursor.js';
import { normalizeTags } from '../retrieval/tags.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { findMarkdownHeadings } from './chunking/markdown-headings.js';
import type { DocumentFormat } from './parsers/document-format.js';
import { parseDocument } from './parsers/parse-document.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { DEFAULT_PASSAGE_TOKENS } from './passages.js';
import { type ChunkingOptions, type PreparedChunk, prepareChunks } from './prepare-chunks.js';

export interface IngestDocumentInput {
  /** Default: the file name without extension, else the first heading, else the first line. */
  title?: string | undefined;
  /** Text, or the bytes of an uploaded file. */
  content: string | Uint8Array;
  format: DocumentFormat;
  /** The upload's name, for the default title and error messages. */
  filename?: string | undefined;
  tags?: readonly string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** Where the document comes from (a URL, a path): a later ingest of the same source replaces it. */
  source?: string | null | undefined;
  chunking?: ChunkingOptions | undefined;
  signal?: AbortSignal | undefined;
}

export interface StoredDocument {
  id: string;
  title: string;
  source: string | null;
  format: DocumentFormat;
  contentHash: string;
  tags: string[];
  metadata: Record<string, unknown>;
  /** Characters of the extracted text. */
  textLength: number;
  chunkCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface IngestResult {
  document: StoredDocument;
  /**
   * `created`: a new document. `replaced`: the document with this `source` now holds the new
   * content (same id, new chunks). `unchanged`: a document with identical text already existed and
   * is returned as it is; nothing was written.
   */
  status: 'created' | 'replaced' | 'unchanged';
}

export interface StoredChunk {
  id: string;
  documentId: string;
  index: number;
  text: string;
  headingPath: string[];
  start: number;
  end: number;
  tokenCount: number;
}

export interface DocumentFilter {
  tagsAny?: readonly string[] | undefined;
  tagsAll?: readonly string[] | undefined;
  tagsNone?: readonly string[] | undefined;
}

export interface ListDocumentsOptions extends DocumentFilter {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface DocumentStore {
  ingest(input: IngestDocumentInput): Promise<IngestResult>;
  get(id: string): Promise<StoredDocument | null>;
  /** The extracted text the chunk offsets refer to. */
  getText(id: string): Promise<string | null>;
  list(options?: ListDocumentsOptions): Promise<Page<StoredDocument>>;
  /** The document's chunks in order; `null` when there is no such document. */
  chunks(id: string, options?: { limit?: number | undefined; cursor?: string | undefined }): Promise<Page<StoredChunk> | null>;
  delete(id: string): Promise<boolean>;
}

export interface DocumentStoreOptions {
  db: Db;
  embedder: Embedder;
  /** The tenant whose documents this store reads and writes, and only those. Default `default`. */
  tenantId?: string;
  analyzer?: Analyzer;
  /** Default the embedder's `countTokens`, else the chunker's (high-erring) estimate. */
  countTokens?: (text: string) => number;
  /** Texts per embedder call. Default 64. */
  embedBatchSize?: number;
}

/** Text as it is hashed, stored and chunked: NFC, `\n` line ends, no outer white space. */
export function normalizeDocumentText(text: string): string {
  return text.normalize('NFC').replace(/\r\n?/g, '\n').trim();
}

export const contentHashOf = (normalizedText: string): string => createHash('sha256').update(normalizedText, 'utf8').digest('hex');

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

const documentColumns = {
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
const chunkCountOf = sql<number>`(SELECT count(*)::int FROM "chunks" c WHERE c."document_id" = "documents"."id")`.as('chunk_count');

type DocumentRow = { [K in keyof typeof documentColumns]: unknown } & { chunkCount: unknown };

const toDocument = (row: DocumentRow): StoredDocument => ({
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

// Rows per multi-row statement: far below the 65,535 bind parameters of the protocol.
const INSERT_BATCH = 500;

export function createDocumentStore(options: DocumentStoreOptions): DocumentStore {
  const { db, embedder } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const ofTenant = eq(documents.tenantId, tenantId);
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const embedBatchSize = options.embedBatchSize ?? 64;
  const countTokens = options.countTokens ?? embedder.countTokens?.bind(embedder);

  async function ingest(input: IngestDocumentInput): Promise<IngestResult> {
    input.signal?.throwIfAborted();
    const parsed = await parseDocument({ format: input.format, data: input.content, ...(input.filename ? { filename: input.filename } : {}) });
    const text = normalizeDocumentText(parsed.text);
    const contentHash = contentHashOf(text);
    const source = input.source ?? null;

    const existing = await findByHash(db, tenantId, contentHash);
    if (existing) return { document: existing, status: 'unchanged' };

    // Cut by code points: a UTF-16 cut could split a surrogate pair, which Postgres stores as U+FFFD.
    const title = Array.from(input.title?.trim() || defaultTitle(text, parsed.markup, input.filename)).slice(0, 1000).join('');
    const tags = normalizeTags(input.tags);
    const metadata = input.metadata ?? {};
    const passageTokens = input.chunking?.passageTokens ?? DEFAULT_PASSAGE_TOKENS;
    const prepared = prepareChunks({
      title,
      text,
      markup: parsed.markup,
      maxInputTokens: embedder.maxInputTokens,
      analyzer,
      ...(input.chunking ? { options: input.chunking } : {}),
      ...(countTokens ? { countTokens } : {}),
    });
    // Outside the transaction: on PGlite a transaction holds the only connection, and the model
    // may take long. Nothing is written unless every batch succeeded.
    const vectors = await embedAll(prepared.map((c) => c.indexedText), input.signal);

    return db.transaction(async (txn) => {
      const tx = txn as unknown as Db;
      await lockCorpus(tx, true);
      // Another writer may have stored the same text while we embedded.
      const raced = await findByHash(tx, tenantId, contentHash);
      if (raced) return { document: raced, status: 'unchanged' as const };

      // Inserted unless this source is stored already: one statement for a new document.
      let status: IngestResult['status'] = 'created';
      let [row] = await tx
        .insert(documents)
        .values({ id: randomUUID(), tenantId, title, source, contentHash, format: input.format, tags, metadata, text, passageTokens })
        .onConflictDoNothing({ target: [documents.tenantId, documents.source] })
        .returning(documentColumns);
      if (!row) {
        status = 'replaced';
        const [previous] = await tx
          .select({ id: documents.id })
          .from(documents)
          .where(and(ofTenant, eq(documents.source, source!)))
          .for('update');
        await removeChunks(tx, previous!.id);
        [row] = await tx
          .update(documents)
          .set({ title, contentHash, format: input.format, tags, metadata, text, passageTokens, updatedAt: sql`now()` })
          .where(and(ofTenant, eq(documents.id, previous!.id)))
          .returning(documentColumns);
      }
      const document = toDocument({ ...row!, chunkCount: prepared.length });
      await insertChunks(tx, document.id, tags, prepared, vectors);
      return { document, status };
    });
  }

  async function embedAll(texts: string[], signal: AbortSignal | undefined): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let i = 0; i < texts.length; i += embedBatchSize) {
      signal?.throwIfAborted();
      const batch = texts.slice(i, i + embedBatchSize);
      const out = await embedder.embed(batch, signal ? { signal } : {});
      if (out.length !== batch.length || out.some((v) => v.length !== embedder.dimensions)) {
        throw new Error(`embedder ${embedder.id} returned ${out.length} vectors for ${batch.length} texts, or vectors of the wrong size`);
      }
      vectors.push(...out);
    }
    return vectors;
  }

  /**
   * Takes the tenant's corpus statistics row lock, which serialises every writer of its postings
   * and statistics (so their upserts never deadlock), and checks the analyzer of its postings.
   */
  async function lockCorpus(tx: Db, writingPostings: boolean): Promise<void> {
    const corpus = await lockBm25Corpus(tx, CHUNK_BM25, tenantId, analyzer.id);
    if (!writingPostings || corpus.analyzerId === analyzer.id) return;
    if (corpus.total > 0) throw new AnalyzerMismatchError(corpus.analyzerId, analyzer.id);
    await setBm25Analyzer(tx, CHUNK_BM25, tenantId, analyzer.id);
  }

  async function insertChunks(tx: Db, documentId: string, tags: string[], prepared: PreparedChunk[], vectors: number[][]): Promise<void> {
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

  /** Deletes a document's chunks and postings, taking its passages out of the BM25 statistics. */
  async function removeChunks(tx: Db, documentId: string): Promise<void> {
    await removeBm25Postings(tx, CHUNK_BM25, tenantId, sql`SELECT id FROM chunks WHERE tenant_id = ${tenantId} AND document_id = ${documentId}`);
    await tx.execute(sql`
      WITH gone AS (DELETE FROM chunks WHERE tenant_id = ${tenantId} AND document_id = ${documentId} RETURNING bm25_length)
      UPDATE corpus_stats SET
        total_chunks = total_chunks - (SELECT count(bm25_length) FROM gone),
        total_length = total_length - (SELECT coalesce(sum(bm25_length), 0) FROM gone)
      WHERE tenant_id = ${tenantId}`);
  }

  async function del(id: string): Promise<boolean> {
    return db.transaction(async (txn) => {
      const tx = txn as unknown as Db;
      await lockCorpus(tx, false);
      const [found] = await tx.select({ id: documents.id }).from(documents).where(and(ofTenant, eq(documents.id, id))).for('update');
      if (!found) return false;
      await removeChunks(tx, id);
      await tx.delete(documents).where(and(ofTenant, eq(documents.id, id)));
      return true;
    });
  }

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

  async function listChunks(id: string, opts: { limit?: number | undefined; cursor?: string | undefined } = {}): Promise<Page<StoredChunk> | null> {
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

  return { ingest, get: (id) => findById(db, tenantId, id), getText, list, chunks: listChunks, delete: del };
}

async function findById(db: Db, tenantId: string, id: string): Promise<StoredDocument | null> {
  const [row] = await db
    .select({ ...documentColumns, chunkCount: chunkCountOf })
    .from(documents)
    .where(and(eq(documents.tenantId, tenantId), eq(documents.id, id)));
  return row ? toDocument(row) : null;
}

async function findByHash(db: Db, tenantId: string, contentHash: string): Promise<StoredDocument | null> {
  const [row] = await db
    .select({ ...documentColumns, chunkCount: chunkCountOf })
    .from(documents)
    .where(and(eq(documents.tenantId, tenantId), eq(documents.contentHash, contentHash)));
  return row ? toDocument(row) : null;
}

function decodeChunkCursor(cursor: string): number {
  if (!/^\d{1,9}$/.test(cursor)) throw new InvalidCursorError();
  return Number(cursor);
}

function defaultTitle(text: string, markup: 'markdown' | 'plain', filename: string | undefined): string {
  const fromName = filename?.replace(/^.*[\\/]/, '').replace(/\.[^.]+$/, '').trim();
  if (fromName) return fromName;
  if (markup === 'markdown') {
    const [heading] = findMarkdownHeadings(text);
    if (heading?.text.trim()) return heading.text.trim();
  }
  const firstLine = text.split('\n').find((line) => line.trim() !== '')?.trim() ?? 'Untitled';
  const points = Array.from(firstLine);
  return points.length > 120 ? `${points.slice(0, 117).join('')}...` : firstLine;
}
