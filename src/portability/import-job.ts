import type { ConversationStore } from '../conversations/conversation-types.js';
import type { Db } from '../db/database.js';
import type { DocumentStore } from '../documents/document-store.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { JobHandler } from '../jobs/job-runner.js';
import type { JobStore } from '../jobs/job-store.js';
import { type Job, type JobKind, type JobProgress, PermanentJobError } from '../jobs/job-types.js';
import type { TenantScoped } from '../tenancy/tenant-scoped.js';
import type { ExportRecord } from './export-lines.js';
import { IMPORT_MEMORY_BATCH, type ImportCounts, type ImportReport, createTenantImport } from './tenant-import.js';

export const IMPORT_JOB_KIND = 'import' satisfies JobKind;

/**
 * Records (lines after the header; Mem0: items) a `POST /v1/import` imports within the request
 * unless `async=true`: past it the import is a job. At the bundled embedder's ~60 memories/s
 * (docs/benchmarks/export-import.md) 1,000 memories take about 17 s, well inside REQUEST_TIMEOUT_MS.
 */
export const SYNC_IMPORT_MAX_RECORDS = 1_000;

/** A line of a file as the request read it: a record checked against its schema, or why it was refused. */
export type ImportItem = { line: number; record: ExportRecord } | { line: number; error: string };

/**
 * Errors an import job keeps, the first by line: a file of invalid lines is as long as the upload
 * limit allows, and its result is read back by every `GET /v1/jobs`. `errorCount` counts them all.
 */
export const IMPORT_JOB_MAX_ERRORS = 100;

/** An import job's result: the report, its errors cut to the first IMPORT_JOB_MAX_ERRORS. */
export interface ImportJobResult extends ImportReport {
  /** Every line not imported, those left out of `errors` included. */
  errorCount: number;
}

/** What an import job's progress holds beside `stage`, `done` and `total` (items of the file): the counts so far. */
export interface ImportProgress extends JobProgress {
  stage: 'import';
  imported: ImportCounts;
  skipped: number;
  /** Lines refused so far. */
  errors: number;
  /**
   * The first records that failed to write so far (lines refused on reading are in the job's
   * content), at most IMPORT_JOB_MAX_ERRORS: kept for a retry to resume.
   */
  writeErrors: Array<{ line: number; message: string }>;
  /** Every record that failed to write so far. */
  writeErrorCount?: number;
}

/**
 * Queues an import: the file's items, read and checked by the request, are the job's content (one
 * JSON object per line), written with the job's row in one statement, so a 202 is answered only
 * once both are stored.
 */
export function queueImport(jobs: JobStore, items: readonly ImportItem[], payload: { format: 'memrag' | 'mem0' }): Promise<Job> {
  const content = items.map((item) => JSON.stringify(item)).join('\n');
  return jobs.enqueue(IMPORT_JOB_KIND, { payload: { ...payload, items: items.length }, content });
}

export interface ImportJobOptions {
  db: Db;
  embedder: Embedder;
  conversations: TenantScoped<ConversationStore>;
  documents: TenantScoped<DocumentStore>;
  /** Told after an import wrote in bulk (planner statistics). */
  afterBulkWrite?: () => Promise<void>;
}

/**
 * Imports a queued file into the job's tenant, IMPORT_MEMORY_BATCH items at a time: after each
 * batch is written, the items done and the counts so far are recorded as progress (and the lease
 * checked, so that a cancelled job stops). A retried attempt resumes after the last batch recorded;
 * a batch written but not yet recorded when a worker died is imported again, which the import's
 * idempotence makes a no-op (its memories are then counted in `skipped`). A batch of memories that
 * fails to write (the embedder or the database failing) fails the attempt, to be retried, rather
 * than being reported line by line as a synchronous import does.
 */
export function importJobHandler(options: ImportJobOptions): JobHandler {
  return async ({ job, report, checkpoint }) => {
    if (typeof job.content !== 'string') throw new PermanentJobError('invalid_job', 'the import job has no file');
    const items = parseItems(job.content);
    const resumed = resumeFrom(job.progress, items.length);
    const importer = createTenantImport(
      {
        db: options.db,
        embedder: options.embedder,
        tenantId: job.tenantId,
        conversations: options.conversations.forTenant(job.tenantId),
        documents: options.documents.forTenant(job.tenantId),
      },
      { batchFailure: 'throw' },
    );
    // Write errors arise in line order, like the rest: those a resumed attempt no longer holds come
    // after every one it holds, so they are never among the first errors of the result.
    const writeErrors: ImportReport['errors'] = [];
    let writeErrorCount = 0;
    if (resumed) {
      Object.assign(importer.report.imported, resumed.imported);
      importer.report.skipped = resumed.skipped;
      importer.report.errors.push(...resumed.writeErrors);
      writeErrors.push(...resumed.writeErrors);
      writeErrorCount = resumed.writeErrorCount;
    }
    // The report holds every error of this attempt and the resumed attempt's first ones: those
    // the resumed attempt counted but no longer holds are added to its count.
    const carried = resumed ? resumed.writeErrorCount - resumed.writeErrors.length : 0;
    // Lines refused on reading, before the resume point, are read again from the file.
    for (const item of items.slice(0, resumed?.done ?? 0)) if ('error' in item) importer.fail(item.line, item.error);

    const progressAt = (done: number): ImportProgress => ({
      stage: 'import',
      done,
      total: items.length,
      imported: { ...importer.report.imported },
      skipped: importer.report.skipped,
      errors: importer.report.errors.length + carried,
      writeErrors: writeErrors.slice(0, IMPORT_JOB_MAX_ERRORS),
      writeErrorCount,
    });
    let wrote = false;
    try {
      for (let start = resumed?.done ?? 0; start < items.length; start += IMPORT_MEMORY_BATCH) {
        const batch = items.slice(start, start + IMPORT_MEMORY_BATCH);
        importer.lookAhead(recordsOf(items.slice(start + IMPORT_MEMORY_BATCH, start + 2 * IMPORT_MEMORY_BATCH)));
        for (const item of batch) {
          if ('error' in item) {
            importer.fail(item.line, item.error);
            continue;
          }
          const before = importer.report.errors.length;
          await importer.add(item.line, item.record);
          for (const e of importer.report.errors.slice(before)) {
            writeErrorCount += 1;
            if (writeErrors.length < IMPORT_JOB_MAX_ERRORS) writeErrors.push(e);
          }
        }
        await importer.flush();
        wrote = true;
        report(progressAt(start + batch.length));
        // Written now, before the next batch: a retry resumes after this one.
        await checkpoint();
      }
      const final = await importer.finish();
      const result: ImportJobResult = {
        imported: final.imported,
        skipped: final.skipped,
        errors: final.errors.slice(0, IMPORT_JOB_MAX_ERRORS),
        errorCount: final.errors.length + carried,
      };
      report(progressAt(items.length));
      return result as unknown as Record<string, unknown>;
    } finally {
      if (wrote) await options.afterBulkWrite?.();
    }
  };
}

/** The items read as records, the refused ones left out. */
export function recordsOf(items: readonly ImportItem[]): ExportRecord[] {
  return items.flatMap((item) => ('record' in item ? [item.record] : []));
}

function parseItems(content: string): ImportItem[] {
  if (content === '') return [];
  return content.split('\n').map((text, i) => {
    try {
      return JSON.parse(text) as ImportItem;
    } catch (err) {
      throw new PermanentJobError('invalid_job', `the import job's item ${i + 1} is not JSON: ${(err as Error).message}`);
    }
  });
}

/** Where a retried attempt starts: after the last batch its progress recorded. */
function resumeFrom(
  progress: JobProgress,
  total: number,
): (Pick<ImportProgress, 'done' | 'imported' | 'skipped' | 'writeErrors'> & { writeErrorCount: number }) | undefined {
  const p = progress as Partial<ImportProgress>;
  if (p.stage !== 'import' || typeof p.done !== 'number' || p.done <= 0 || p.done > total || !p.imported) return undefined;
  const writeErrors = p.writeErrors ?? [];
  return { done: p.done, imported: p.imported, skipped: p.skipped ?? 0, writeErrors, writeErrorCount: p.writeErrorCount ?? writeErrors.length };
}
