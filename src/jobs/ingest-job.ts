import { z } from 'zod';
import type { Db } from '../db/database.js';
import { createIngestPipeline } from '../documents/ingest/ingest-pipeline.js';
import { DocumentParseError } from '../documents/parsers/document-parse-error.js';
import { DOCUMENT_FORMATS } from '../documents/parsers/document-format.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { JobHandler } from './job-runner.js';
import { type JobError, PermanentJobError } from './job-types.js';

/** An ingest job's parameters, as the API queued them (the text or file is the job's `content`). */
export const ingestPayloadSchema = z.object({
  title: z.string().optional(),
  format: z.enum(DOCUMENT_FORMATS).optional(),
  filename: z.string().optional(),
  tags: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  source: z.string().optional(),
  chunking: z.object({ maxTokens: z.number().optional(), overlapTokens: z.number().optional(), passageTokens: z.number().optional() }).optional(),
  /** Fetched by the worker instead of `content`. */
  url: z.string().optional(),
});
export type IngestPayload = z.infer<typeof ingestPayloadSchema>;

export interface IngestJobOptions {
  db: Db;
  embedder: Embedder;
  /** Fetches a URL source; absent, URL jobs fail. */
  fetchSource?: (url: string, signal: AbortSignal) => Promise<{ content: Uint8Array; format: (typeof DOCUMENT_FORMATS)[number]; filename?: string }>;
}

/**
 * Runs the ingest pipeline for a job, reporting each stage and embedded batch as progress, and
 * marking the job succeeded in the transaction that writes the document: a retried job either
 * finds it succeeded (and is never run), or finds nothing written.
 */
export function ingestJobHandler(options: IngestJobOptions): JobHandler {
  return async ({ job, signal, report, complete }) => {
    const parsed = ingestPayloadSchema.safeParse(job.payload);
    if (!parsed.success) throw new PermanentJobError('invalid_job', `the job's input is not valid: ${parsed.error.message}`);
    const payload = parsed.data;
    let content = job.content;
    let format = payload.format;
    let filename = payload.filename;
    if (payload.url !== undefined) {
      if (!options.fetchSource) throw new PermanentJobError('url_not_supported', 'this worker cannot fetch URLs');
      report({ stage: 'fetch', done: 0, total: 1 });
      const fetched = await options.fetchSource(payload.url, signal);
      content = fetched.content;
      format ??= fetched.format;
      filename ??= fetched.filename;
    }
    if (content === null || format === undefined) throw new PermanentJobError('invalid_job', 'the job has no content, or no format');
    const pipeline = createIngestPipeline({ db: options.db, embedder: options.embedder, tenantId: job.tenantId });
    const result = await pipeline.run(
      {
        content,
        format,
        filename,
        title: payload.title,
        tags: payload.tags,
        metadata: payload.metadata,
        source: payload.source ?? payload.url,
        chunking: payload.chunking,
        signal,
      },
      {
        onProgress: report,
        inTransaction: (tx, r) => complete(tx, { documentId: r.document.id, status: r.status }),
      },
    );
    return { documentId: result.document.id, status: result.status };
  };
}

/** Failures of the document itself: retrying cannot fix a corrupt or empty file. */
export function permanentIngestError(err: unknown): JobError | undefined {
  if (err instanceof DocumentParseError) return { code: err.code, message: err.message };
  return undefined;
}
