import { bigint, index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * The SQL names of one BM25 index's tables. Chunks, memories and turns each have an index of the
 * same shape, under names given before they shared one definition: the names stay as the
 * migrations made them.
 */
export interface Bm25TableNames {
  postings: string;
  /** The postings column naming the indexed row. */
  documentColumn: string;
  /**
   * The postings' index by indexed row and term (their counts included), which those deletes read,
   * and a search narrowed to a few rows probes for the query's terms. Its INCLUDE (tf, doc_length),
   * which drizzle cannot declare, is in migration 0017's SQL: a migration generated over this index
   * must keep it.
   */
  postingsByDocumentIndex: string;
  termStats: string;
  corpusStats: string;
  /** The corpus statistics column counting indexed rows. */
  totalColumn: string;
}

/**
 * The tables of one BM25 index: postings (how often each term occurs in each indexed row), the
 * tenant's rows holding each term (document frequency, kept in step with the postings) and one
 * row of totals per tenant with the analyzer that produced its postings. The tenant leads every
 * key: a text search reads its own tenant's postings only, and frequencies are per tenant, since
 * shared ones would let one tenant's writes move another's scores. The totals row's lock
 * serialises the tenant's writers of the index (see src/retrieval/bm25/bm25-corpus.ts).
 */
export function bm25Tables(names: Bm25TableNames) {
  const postings = pgTable(
    names.postings,
    {
      tenantId: tenantIdColumn(),
      /**
       * The indexed row, with no foreign key: its check, a lookup and a row lock for every posting,
       * took 40% of an import's postings insert. Postings are written only for rows their
       * transaction inserted or holds under the corpus lock, and a statement trigger on the indexed
       * table deletes a deleted row's postings (migration 0026), as the key's cascade did.
       */
      documentId: uuid(names.documentColumn).notNull(),
      term: text('term').notNull(),
      tf: integer('tf').notNull(),
      /** The row's length in terms, as its length column holds it: a search scores from the postings alone. */
      docLength: integer('doc_length').notNull(),
    },
    (t) => [primaryKey({ columns: [t.tenantId, t.term, t.documentId] }), index(names.postingsByDocumentIndex).on(t.documentId, t.term)],
  );
  const termStats = pgTable(
    names.termStats,
    {
      tenantId: tenantIdColumn(),
      term: text('term').notNull(),
      df: integer('df').notNull(),
    },
    (t) => [primaryKey({ columns: [t.tenantId, t.term] })],
  );
  const corpusStats = pgTable(names.corpusStats, {
    tenantId: text('tenant_id').primaryKey().default('default'),
    total: bigint(names.totalColumn, { mode: 'number' }).notNull().default(0),
    totalLength: bigint('total_length', { mode: 'number' }).notNull().default(0),
    analyzerId: text('analyzer_id').notNull(),
  });
  return { postings, termStats, corpusStats };
}
