import { and, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { uuidArray } from '../db/sql-arrays.js';
import type { Corpus } from './corpus.js';
import { filterToSql } from './filter-sql.js';
import { hybridCandidates } from './hybrid-candidates.js';
import type { CorpusSearchOptions, Payload, RetrievalEngine } from './retrieval-engine.js';
import type { SignalRanks } from './signal.js';

export interface RowSearchOptions extends Omit<CorpusSearchOptions, 'candidateK' | 'payload'> {
  /** The columns a hit shows, by name. */
  payload: Payload;
}

export interface RowHit<Row> {
  row: Row;
  score: number;
  ranks: SignalRanks;
}

/**
 * Candidates up to which the sides of a search bring the payload along with each row. Past it,
 * they return ids and scores, and the `topK` rows shown are read once, after fusion: reading a
 * payload costs per row (a turn's answer is read from TOAST), a statement costs once. LongMemEval
 * on PGlite, topK 50 (250 candidates a side, a user's every turn): the payloads took the BM25
 * statement from 11.0 to 14.1 ms and the vector statement from 5.3 to 8.2.
 */
export const PAYLOAD_ALONG_MAX_CANDIDATES = 50;

/**
 * Search over a corpus whose unit is the row itself (memories, turns): the best `topK` rows with
 * their payload columns. Over few candidates the sides bring their rows along, and the rows BM25
 * alone found are read once more; over many (see PAYLOAD_ALONG_MAX_CANDIDATES) all are read after
 * fusion. A row read after is shown only if it still matches the filter (one may have changed or
 * gone since).
 */
export async function searchRows<Row>(engine: RetrievalEngine, db: Db, corpus: Corpus, query: string, options: RowSearchOptions): Promise<RowHit<Row>[]> {
  const { topK, filter, payload } = options;
  // Vector and text modes rank their own topK; hybrid fuses wider lists.
  const candidateK = options.mode === 'hybrid' ? hybridCandidates(topK) : topK;
  const along = candidateK <= PAYLOAD_ALONG_MAX_CANDIDATES;
  const ranked = (await engine.search(corpus, query, { ...options, candidateK, payload: along ? payload : undefined })).slice(0, topK);
  const missing = ranked.filter((h) => !h.row).map((h) => h.id);
  const rows =
    missing.length === 0
      ? []
      : ((await db
          .select({ ...payload, id: corpus.id })
          .from(corpus.table)
          .where(and(filterToSql(filter, corpus.filters), sql`${corpus.id} = ANY(${uuidArray(missing)})`))) as ({ id: string } & Record<string, unknown>)[]);
  const fetched = new Map(rows.map(({ id, ...row }) => [id, row]));
  return ranked.flatMap((h) => {
    const row = (h.row ?? fetched.get(h.id)) as Row | undefined;
    return row ? [{ row, score: h.score, ranks: h.ranks }] : [];
  });
}
