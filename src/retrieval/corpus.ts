import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Bm25IndexTables } from './bm25/bm25-index-tables.js';
import type { CorpusFilter } from './filter.js';
import type { FilterColumns } from './filter-sql.js';
import type { CorpusSignal } from './signal.js';

/**
 * What the retrieval engine needs to know of a corpus: the table both sides rank, its BM25 index
 * and how its filters reach SQL. A new corpus is one descriptor and its tables (a vector column,
 * a BM25 length column, and postings, term and corpus statistics shaped as `Bm25IndexTables`).
 */
export interface Corpus {
  /** For messages and metrics. */
  name: string;
  table: PgTable;
  id: PgColumn;
  embedding: PgColumn;
  /**
   * The unit a hit is, when it is not the row itself: a document chunk counts for its passage.
   * BM25 scores the units (their postings belong to the unit's own row, whose id is the unit's);
   * the vector side finds rows, each counting for its unit at the rank of the unit's nearest row.
   */
  unit?: PgColumn;
  /** The terms indexed for each row (NULL: not indexed, never scored). */
  bm25Length: PgColumn;
  bm25: Bm25IndexTables;
  filters: FilterColumns;
  /** The HNSW candidate list of this corpus's searches, at least (its graph may be built sparse). */
  efSearch?: number;
  /**
   * The corpus's rows counted by scope and tag in `vector_filter_stats` (kept by triggers): a
   * vector search estimates how many rows its filter matches from there. `scopes` names the
   * scopes a filter's rows lie in, or null when the counts cannot bound it (the search then counts
   * its matches, capped). Absent: always counted.
   */
  filterStats?: { table: string; scopes(filter: CorpusFilter): readonly string[] | null };
  /** What an operator must do when the corpus was indexed by another analyzer. */
  reindexRemedy?: string;
  /**
   * Signals of its own beside the engine's `vector` and `text` (time, entity, block…), by name: a
   * hybrid search runs each whose weight (`FusionWeights.signals[name]`) is above 0 and fuses its
   * ranks with the others'.
   */
  signals?: Readonly<Record<string, CorpusSignal>>;
}
