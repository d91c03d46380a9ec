import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { vectorColumn } from './vector-column.js';

/** One row per vector space in use: which embedder wrote the vectors of a table, and their size. */
export const vectorSpaces = pgTable('vector_spaces', {
  tableName: text('table_name').primaryKey(),
  embedderId: text('embedder_id').notNull(),
  dimensions: integer('dimensions').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const memories = pgTable(
  'memories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    agentId: text('agent_id').notNull(),
    key: text('key').notNull(),
    content: text('content').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    embedding: vectorColumn('embedding'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('memories_agent_key_idx').on(t.agentId, t.key),
    // fastupdate off: a pending list makes every filtered search scan it (7 ms at 100k rows).
    index('memories_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
    index('memories_agent_created_idx').on(t.agentId, t.createdAt, t.id),
  ],
);

/**
 * Ingested documents. `content_hash` (sha256 of the normalised text) makes re-ingesting the same
 * content a no-op; `source` (a URL, a path) names a document that a later ingest replaces.
 */
export const documents = pgTable(
  'documents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    title: text('title').notNull(),
    source: text('source'),
    contentHash: text('content_hash').notNull(),
    format: text('format').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /** The extracted, normalised text; chunk offsets refer to it. */
    text: text('text').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // NULLs are distinct: any number of documents without a source.
    uniqueIndex('documents_source_idx').on(t.source),
    uniqueIndex('documents_content_hash_idx').on(t.contentHash),
    index('documents_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
    index('documents_created_idx').on(t.createdAt, t.id),
  ],
);

/** Pieces of a document, each embedded and indexed for BM25; tags are the document's, copied for filtering. */
export const chunks = pgTable(
  'chunks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    documentId: uuid('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    index: integer('index').notNull(),
    text: text('text').notNull(),
    /**
     * Embedded and indexed in front of `text` (the document title, when it fits the embedder's
     * window); not part of the document's text, so not covered by `start`/`end`.
     */
    context: text('context').notNull().default(''),
    headingPath: text('heading_path').array().notNull().default(sql`'{}'::text[]`),
    start: integer('start').notNull(),
    end: integer('end').notNull(),
    tokenCount: integer('token_count').notNull(),
    /** Terms the analyzer made of the indexed text: BM25's document length. */
    bm25Length: integer('bm25_length').notNull(),
    embedding: vectorColumn('embedding'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
  },
  (t) => [
    uniqueIndex('chunks_document_index_idx').on(t.documentId, t.index),
    index('chunks_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
  ],
);

/** BM25 postings: how often each term occurs in each chunk's indexed text. */
export const postings = pgTable(
  'postings',
  {
    chunkId: uuid('chunk_id')
      .notNull()
      .references(() => chunks.id, { onDelete: 'cascade' }),
    term: text('term').notNull(),
    tf: integer('tf').notNull(),
  },
  (t) => [primaryKey({ columns: [t.term, t.chunkId] }), index('postings_chunk_idx').on(t.chunkId)],
);

/** Chunks holding each term (BM25's document frequency), kept in step with `postings`. */
export const termStats = pgTable('term_stats', {
  term: text('term').primaryKey(),
  df: integer('df').notNull(),
});

/**
 * The one row of corpus-wide BM25 statistics, and the analyzer that produced every posting: its
 * row lock also serialises the writers of postings and statistics.
 */
export const corpusStats = pgTable(
  'corpus_stats',
  {
    id: integer('id').primaryKey().default(1),
    totalChunks: bigint('total_chunks', { mode: 'number' }).notNull().default(0),
    totalLength: bigint('total_length', { mode: 'number' }).notNull().default(0),
    analyzerId: text('analyzer_id').notNull(),
  },
  (t) => [check('corpus_stats_single_row', sql`${t.id} = 1`)],
);
