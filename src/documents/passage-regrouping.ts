import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/database.js';
import { chunks, documents } from '../db/schema/index.js';
import { intArray, uuidArray } from '../db/sql-arrays.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { lockBm25Corpus } from '../retrieval/bm25/bm25-corpus.js';
import { CHUNK_BM25 } from '../retrieval/bm25/bm25-index-tables.js';
import { addBm25Documents, adjustBm25Totals, removeBm25Postings } from '../retrieval/bm25/bm25-postings-write.js';
import { approximateTokenCount } from '../text/approximate-token-count.js';
import { AnalyzerMismatchError } from '../retrieval/analyzer-mismatch-error.js';
import { storedChunkColumns } from './document-rows.js';
import { DEFAULT_PASSAGE_TOKENS } from './passages.js';
import { preparePassages } from './prepare-chunks.js';

export interface RegroupPassagesOptions {
  analyzer?: Analyzer;
  /** The embedder's tokenizer, as the ingest counts passages; default the (high-erring) estimate. */
  countTokens?: (text: string) => number;
  /** Documents per transaction. Default 100. */
  batchSize?: number;
}

/**
 * Groups the chunks of documents indexed before BM25 passages existed (`passage_tokens` NULL, as
 * migration 0005 leaves them, every chunk a passage of its own) into passages of the default
 * size, once at start, tenant by tenant. Nothing is embedded again: the chunks, their offsets and
 * the document text are stored, and only the postings change. Each batch is one transaction under
 * the tenant's corpus lock, so ingests may run meanwhile and an interrupted run resumes where it
 * stopped. Returns the number of documents regrouped.
 */
export async function regroupLegacyPassages(db: Db, options: RegroupPassagesOptions = {}): Promise<number> {
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const countTokens = options.countTokens ?? approximateTokenCount;
  const batchSize = options.batchSize ?? 100;
  const tenants = await db.selectDistinct({ tenantId: documents.tenantId }).from(documents).where(isNull(documents.passageTokens));
  let regrouped = 0;
  for (const { tenantId } of tenants) {
    for (;;) {
      const done = await db.transaction(async (tx) => {
        const corpus = await lockBm25Corpus(tx, CHUNK_BM25, tenantId, analyzer.id);
        if (corpus.analyzerId !== analyzer.id) throw new AnalyzerMismatchError(corpus.analyzerId, analyzer.id);
        // No row locks needed: every writer of the tenant's documents holds the corpus lock we hold.
        const docs = await tx
          .select({ id: documents.id, title: documents.title, text: documents.text })
          .from(documents)
          .where(and(eq(documents.tenantId, tenantId), isNull(documents.passageTokens)))
          .orderBy(asc(documents.id))
          .limit(batchSize);
        if (docs.length === 0) return 0;
        await regroup(tx, tenantId, docs, analyzer, countTokens);
        return docs.length;
      });
      if (done === 0) break;
      regrouped += done;
    }
  }
  return regrouped;
}

async function regroup(
  tx: Tx,
  tenantId: string,
  docs: { id: string; title: string; text: string }[],
  analyzer: Analyzer,
  countTokens: (text: string) => number,
): Promise<void> {
  const docIds = uuidArray(docs.map((d) => d.id));
  const rows = await tx
    .select({ ...storedChunkColumns, bm25Length: chunks.bm25Length })
    .from(chunks)
    .where(and(eq(chunks.tenantId, tenantId), sql`${chunks.documentId} = ANY(${docIds})`))
    .orderBy(asc(chunks.documentId), asc(chunks.index));

  const ids: string[] = [];
  const passageIds: string[] = [];
  // -1 for chunks that are not the first of their passage: they carry no length.
  const lengths: number[] = [];
  const leads: { id: string; termFrequencies: Map<string, number>; length: number }[] = [];
  let oldPassages = 0;
  let oldLength = 0;
  for (const doc of docs) {
    const own = rows.filter((r) => r.documentId === doc.id);
    if (own.length === 0) continue;
    const passages = preparePassages({ chunks: own, source: doc.text, title: doc.title, countTokens, analyzer });
    for (const [i, chunk] of own.entries()) {
      const { passage, passageTerms } = passages[i]!;
      if (chunk.bm25Length !== null) {
        oldPassages++;
        oldLength += chunk.bm25Length;
      }
      ids.push(chunk.id);
      passageIds.push(own[passage]!.id);
      lengths.push(passageTerms?.length ?? -1);
      if (passageTerms) leads.push({ id: chunk.id, termFrequencies: passageTerms.termFrequencies, length: passageTerms.length });
    }
  }

  await removeBm25Postings(tx, CHUNK_BM25, tenantId, sql`SELECT id FROM chunks WHERE tenant_id = ${tenantId} AND document_id = ANY(${docIds})`);
  await adjustBm25Totals(tx, CHUNK_BM25, tenantId, -oldPassages, -oldLength);
  if (ids.length > 0) {
    await tx.execute(sql`UPDATE chunks c SET passage_id = v.passage_id, bm25_length = NULLIF(v.len, -1)
      FROM unnest(${uuidArray(ids)}, ${uuidArray(passageIds)}, ${intArray(lengths)}) AS v(id, passage_id, len)
      WHERE c.tenant_id = ${tenantId} AND c.id = v.id`);
  }
  await addBm25Documents(tx, CHUNK_BM25, tenantId, leads);
  await tx
    .update(documents)
    .set({ passageTokens: DEFAULT_PASSAGE_TOKENS })
    .where(and(eq(documents.tenantId, tenantId), sql`${documents.id} = ANY(${docIds})`));
}
