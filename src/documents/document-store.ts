import { and, eq } from 'drizzle-orm';
import { documents } from '../db/schema/index.js';
import { defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import type { AfterBulkWrite } from '../db/table-statistics.js';
import { createCorpusIndex } from '../retrieval/corpus-index.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { type DocumentReader, createDocumentReader } from './document-reader.js';
import { type IngestDocumentInput, type IngestPipelineOptions, createIngestPipeline } from './ingest/ingest-pipeline.js';
import { removeDocumentChunks } from './ingest/write-stage.js';
import { PASSAGE_CORPUS } from './passage-corpus.js';
import type { IngestResult } from './stored-document.js';

/** Reading as `DocumentReader`; `ingest` and `delete` are the writes. */
export interface DocumentStore extends DocumentReader {
  ingest(input: IngestDocumentInput): Promise<IngestResult>;
  delete(id: string): Promise<boolean>;
}

export interface DocumentStoreOptions extends IngestPipelineOptions {
  /** The tenant whose documents this store reads and writes, and only those. Default `default`. */
  tenantId?: string;
  /** Called after an ingestion, to bring planner statistics up to date (`TableStatistics`). */
  afterBulkWrite?: AfterBulkWrite;
}

/**
 * One tenant's documents. `ingest` runs the whole ingest pipeline (`ingest/`) at once; a caller
 * that wants progress, or the stages one by one, uses the pipeline or the stages themselves.
 */
export function createDocumentStore(options: DocumentStoreOptions): DocumentStore {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const pipeline = createIngestPipeline({ ...options, tenantId, analyzer });
  const reader = createDocumentReader({ db, tenantId });
  const index = createCorpusIndex(PASSAGE_CORPUS, analyzer);

  async function del(id: string): Promise<boolean> {
    const ofTenant = eq(documents.tenantId, tenantId);
    return db.transaction(async (tx) => {
      await index.lock(tx, tenantId, false);
      const [found] = await tx
        .select({ id: documents.id })
        .from(documents)
        .where(and(ofTenant, eq(documents.id, id)))
        .for('update');
      if (!found) return false;
      await removeDocumentChunks(tx, index, tenantId, id);
      await tx.delete(documents).where(and(ofTenant, eq(documents.id, id)));
      return true;
    });
  }

  async function ingest(input: IngestDocumentInput): Promise<IngestResult> {
    try {
      return await pipeline.run(input);
    } finally {
      await options.afterBulkWrite?.();
    }
  }

  return { ...reader, ingest, delete: del };
}
