import { sql } from 'drizzle-orm';

/**
 * The tables of one BM25 index in the database: postings (tenant_id, `<document>`, term, tf), term
 * statistics (tenant_id, term, df) and corpus statistics with one row per tenant (tenant_id,
 * `<total>`, total_length, analyzer_id). Chunks, memories and turns each have one, with the same shape.
 *
 * Every function takes the tenant, and touches that tenant's rows only: each tenant is a corpus
 * of its own, so one tenant's writes never move another's document frequencies or scores, and
 * its corpus locks order that tenant's writers only.
 */
export interface Bm25IndexTables {
  postings: string;
  /** The postings column naming the indexed row. */
  documentColumn: string;
  termStats: string;
  corpusStats: string;
  /** The corpus statistics column counting indexed rows. */
  totalColumn: string;
}

/** A table or column of an index's tables, quoted for SQL. */
export const id = (name: string) => sql.identifier(name);

/** The BM25 index of document chunks. */
export const CHUNK_BM25: Bm25IndexTables = Object.freeze({
  postings: 'postings',
  documentColumn: 'chunk_id',
  termStats: 'term_stats',
  corpusStats: 'corpus_stats',
  totalColumn: 'total_chunks',
});

/** The BM25 index of memories. */
export const MEMORY_BM25: Bm25IndexTables = Object.freeze({
  postings: 'memory_postings',
  documentColumn: 'memory_id',
  termStats: 'memory_term_stats',
  corpusStats: 'memory_corpus_stats',
  totalColumn: 'total',
});

/** The BM25 index of past conversation turns. */
export const TURN_BM25: Bm25IndexTables = Object.freeze({
  postings: 'turn_postings',
  documentColumn: 'turn_id',
  termStats: 'turn_term_stats',
  corpusStats: 'turn_corpus_stats',
  totalColumn: 'total',
});
