import type { Db } from '../../db/database.js';
import type { Embedder } from '../../embeddings/embedder.js';
import { type Analyzer, defaultAnalyzer } from '../../retrieval/bm25/analyzer.js';
import { DEFAULT_TENANT_ID } from '../../tenancy/tenant-id.js';
import { findDocumentByHash } from '../document-rows.js';
import type { DocumentFormat } from '../parsers/document-format.js';
import type { ChunkingOptions } from '../prepare-chunks.js';
import type { IngestResult } from '../stored-document.js';
import { chunkStage } from './chunk-stage.js';
import { embedStage } from './embed-stage.js';
import { normaliseStage } from './normalise-stage.js';
import { parseStage } from './parse-stage.js';
import { writeStage } from './write-stage.js';

export interface IngestDocumentInput {
  /** Default: the file name without extension, else the first heading, else the first line. */
  title?: string;
  /** Text, or the bytes of an uploaded file. */
  content: string | Uint8Array;
  format: DocumentFormat;
  /** The upload's name, for the default title and error messages. */
  filename?: string;
  tags?: readonly string[];
  metadata?: Record<string, unknown>;
  /** Where the document comes from (a URL, a path): a later ingest of the same source replaces it. */
  source?: string | null;
  chunking?: ChunkingOptions;
  signal?: AbortSignal;
}

/** The stages of an ingest, in the order they run. */
export const INGEST_STAGES = ['parse', 'normalise', 'chunk', 'embed', 'write'] as const;
export type IngestStage = (typeof INGEST_STAGES)[number];

/**
 * Where an ingest is. Each stage reports `done: 0` when it starts and `done === total` when it has
 * finished; `embed` also after each batch. `total` counts chunks for `embed` and `write`, else 1.
 */
export interface IngestProgress {
  stage: IngestStage;
  done: number;
  total: number;
}

export interface IngestPipelineOptions {
  db: Db;
  embedder: Embedder;
  /** The tenant whose documents are written, and only those. Default `default`. */
  tenantId?: string;
  analyzer?: Analyzer;
  /** Default the embedder's `countTokens`, else the chunker's (high-erring) estimate. */
  countTokens?: (text: string) => number;
  /** Texts per embedder call. Default 64. */
  embedBatchSize?: number;
}

export interface IngestRunOptions {
  /** Called synchronously at each stage change and embedded batch; must not throw. */
  onProgress?: (progress: IngestProgress) => void;
  /** See WriteStageOptions.inTransaction; also called (with no transaction of its own) when the text was stored already. */
  inTransaction?: (tx: Db, result: IngestResult) => Promise<void>;
}

export interface IngestPipeline {
  /** Parses, normalises, chunks, embeds and writes a document; `input.signal` is checked between stages. */
  run(input: IngestDocumentInput, options?: IngestRunOptions): Promise<IngestResult>;
}

export function createIngestPipeline(options: IngestPipelineOptions): IngestPipeline {
  const { db, embedder } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const countTokens = options.countTokens ?? embedder.countTokens?.bind(embedder);

  async function run(input: IngestDocumentInput, { onProgress, inTransaction }: IngestRunOptions = {}): Promise<IngestResult> {
    const { signal } = input;
    /** Runs one stage between its start and end reports; `report` is for progress within it. */
    const stage = async <T>(name: IngestStage, total: number, work: (report: (done: number) => void) => T | Promise<T>): Promise<T> => {
      onProgress?.({ stage: name, done: 0, total });
      signal?.throwIfAborted();
      let reported = 0;
      const out = await work((done) => {
        reported = done;
        onProgress?.({ stage: name, done, total });
      });
      if (reported !== total) onProgress?.({ stage: name, done: total, total });
      return out;
    };

    const parsed = await stage('parse', 1, () => parseStage(input));
    const normalised = await stage('normalise', 1, async () => {
      const document = normaliseStage(parsed, input);
      // Before any chunking or embedding: re-sending a stored text costs one lookup.
      return { document, existing: await findDocumentByHash(db, tenantId, document.contentHash) };
    });
    if (normalised.existing) {
      const result = { document: normalised.existing, status: 'unchanged' as const };
      await inTransaction?.(db, result);
      return result;
    }

    const chunked = await stage('chunk', 1, () =>
      chunkStage(normalised.document, { maxInputTokens: embedder.maxInputTokens, analyzer, countTokens, chunking: input.chunking }),
    );
    const total = chunked.chunks.length;
    // Outside the transaction: on PGlite a transaction holds the only connection, and the model
    // may take long. Nothing is written unless every batch succeeded.
    const embedded = await stage('embed', total, (report) =>
      embedStage(chunked, { embedder, batchSize: options.embedBatchSize, signal, onProgress: ({ done }) => report(done) }),
    );
    return stage('write', total, () => writeStage(embedded, { db, tenantId, analyzer, signal, inTransaction }));
  }

  return { run };
}
