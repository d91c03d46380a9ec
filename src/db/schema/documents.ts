import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { vectorColumn } from '../vector-column.js';
import { bm25Tables } from './bm25-tables.js';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * Ingested documents. `content_hash` (sha256 of the normalised text) makes re-ingesting the same
 * content a no-op; `source` (a URL, a path) names a document that a later ingest replaces.
 */
export const documents = pgTable(
  'documents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: tenantIdColumn(),
    title: text('title').notNull(),
    source: text('source'),
    contentHash: text('content_hash').notNull(),
    format: text('format').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /** The extracted, normalised text; chunk offsets refer to it. */
    text: text('text').notNull(),
    /** The BM25 passage size its chunks were grouped by; NULL for documents indexed before passages (one per chunk). */
    passageTokens: integer('passage_tokens'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // NULLs are distinct: any number of documents without a source.
    uniqueIndex('documents_tenant_source_idx').on(t.tenantId, t.source),
    // Per tenant: two tenants ingesting the same text get a document each.
    uniqueIndex('documents_tenant_content_hash_idx').on(t.tenantId, t.contentHash),
    index('documents_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
    index('documents_tenant_created_idx').on(t.tenantId, t.createdAt, t.id),
  ],
);

/**
 * Pieces of a document, each embedded and indexed for BM25; the tenant and tags are the
 * document's, copied so that vector and BM25 scans filter without a join.
 */
export const chunks = pgTable(
  'chunks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: tenantIdColumn(),
    documentId: uuid('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    index: integer('index').notNull(),
    text: text('text').notNull(),
    /**
     * Embedded in front of `text` (the document title, when it fits the embedder's
     * window); not part of the document's text, so not covered by `start`/`end`.
     */
    context: text('context').notNull().default(''),
    headingPath: text('heading_path').array().notNull().default(sql`'{}'::text[]`),
    start: integer('start').notNull(),
    end: integer('end').notNull(),
    tokenCount: integer('token_count').notNull(),
    /**
     * The first chunk of this chunk's BM25 passage (consecutive chunks of the document, indexed
     * together); a chunk that starts a passage names itself. The postings are the first chunk's.
     */
    passageId: uuid('passage_id').notNull(),
    /** On a passage's first chunk: the number of terms in the passage, BM25's document length. NULL on the others. */
    bm25Length: integer('bm25_length'),
    embedding: vectorColumn('embedding'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
  },
  (t) => [
    uniqueIndex('chunks_document_index_idx').on(t.documentId, t.index),
    index('chunks_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
    // Counts a tenant's matches before a filtered vector search (exact scan or HNSW).
    index('chunks_tenant_idx').on(t.tenantId),
    // A passage's chunks, to pick the one a hit cites.
    index('chunks_passage_idx').on(t.passageId),
  ],
);

/**
 * The BM25 index of document passages, each keyed by its first chunk. `total_chunks` counts
 * passages: the name predates them, when every chunk was one.
 */
export const { postings, termStats, corpusStats } = bm25Tables({
  postings: 'postings',
  documentColumn: 'chunk_id',
  postingsByDocumentIndex: 'postings_chunk_idx',
  termStats: 'term_stats',
  corpusStats: 'corpus_stats',
  totalColumn: 'total_chunks',
});
