import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { recordAudit } from '../audit-record.js';
import type { IngestDocumentInput } from '../../documents/ingest/ingest-pipeline.js';
import type { IngestResult } from '../../documents/stored-document.js';
import { detectFormat } from '../../documents/parsers/document-format.js';
import type { ApiEnv } from '../api-env.js';
import { HttpError, invalidJson, notFound, validationError } from '../../api/errors.js';
import { jobView } from '../job-view.js';
import type { JobInput } from '../../jobs/job-store.js';
import type { Job } from '../../jobs/job-types.js';
import { jobReplySchema } from '../../api/schemas/job-schemas.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, header, json, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import { chunkPageSchema, documentPageSchema, documentReplySchema, ingestReplySchema } from '../../api/schemas/document-reply-schemas.js';
import { TAG_LIST_PARAMS } from '../../api/schemas/memory-schemas.js';
import {
  documentIdParams,
  ingestBatchBody,
  ingestFormFields,
  ingestJsonBody,
  ingestUrlBody,
  listChunksQuery,
  listDocumentsQuery,
} from '../../api/schemas/document-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { idParam, parseQuery, parseWith, readJsonBody } from '../validate.js';

/**
 * `/v1/documents`: ingest (JSON text or a multipart file upload), list, read, list chunks, delete.
 * Parse errors become 415 (unsupported type) or 422 (corrupt or empty file): see ../../api/error-mapping.ts.
 */
export function createDocumentRoutes(ctx: AppContext): ApiRoutes {
  // The request's tenant's documents only: another tenant's id is a 404, like a missing one.
  const documentsOf = (c: Context<ApiEnv>) => ctx.documents.forTenant(tenantOf(c));
  const documentNotFoundResponse = notFoundResponse('document');
  const routes = createApiRoutes();

  const ingestDocumentRoute = createRoute({
    method: 'post',
    path: '/',
    operationId: 'ingestDocument',
    tags: [TAGS.documents],
    summary: 'Ingest a document (JSON text, or a multipart file upload)',
    description:
      'Chunks by structure to at most `maxTokens` with `overlapTokens` between neighbours, embeds the chunks and indexes ' +
      'runs of them up to `passageTokens` as BM25 passages, ' +
      'all in one transaction. Identical text again answers the stored document (`unchanged`); a known `source` with new ' +
      'text replaces that document (`replaced`, same id). A multipart upload carries `file` (.txt, .md, .html, .pdf) and ' +
      'the same fields as text: `tags` repeated, comma-separated or a JSON array, `metadata` as a JSON object. ' +
      'With `async: true` (or `Prefer: respond-async`) it answers `202 {job}` at once; `{url}` (fetched by a worker), ' +
      '`{documents: [...]}` and several files are always jobs. A synchronous ingest over SYNC_INGEST_MAX_BYTES is refused (413 `use_async`).',
    request: {
      body: {
        required: true,
        content: {
          ...json(z.union([ingestJsonBody, ingestUrlBody, ingestBatchBody])),
          'multipart/form-data': {
            schema: ingestFormFields.safeExtend({
              file: z
                .union([z.file(), z.array(z.file())])
                .meta({ description: 'The document: .txt, .md, .html or .pdf; several `file` parts make a batch job.' }),
            }),
          },
        },
      },
    },
    responses: {
      200: jsonReply('`unchanged` or `replaced`.', ingestReplySchema),
      202: jsonReply(
        'Queued as a job (`async: true`, `Prefer: respond-async`, a `url`, a batch): follow it at `Location`.',
        jobReplySchema,
        z.object({ Location: header('The job: `/v1/jobs/{id}`.') }),
      ),
      413: errorResponse({ codes: ['use_async', 'payload_too_large'], description: 'Too large to ingest within the request: send it with `async: true`.' }),
      201: jsonReply('`created`.', ingestReplySchema, z.object({ Location: header('The new document: `/v1/documents/{id}`.') })),
      415: errorResponse({ codes: ['unsupported_media_type'], description: 'The file type is not supported.' }),
      422: errorResponse({ codes: ['unprocessable_document'], description: 'The file is corrupt, or holds no text.' }),
    },
  });
  defineRoute(routes, ingestDocumentRoute, async (c) => {
    const request = isForm(c) ? await formRequest(c) : await jsonRequest(c);
    const jobs = ctx.jobs.forTenant(tenantOf(c));
    if (request.kind === 'batch') return replyQueued(c, await jobs.enqueueBatch('ingest', request.batch.map(toJobInput)));
    if (request.kind === 'url') return replyQueued(c, await jobs.enqueue('ingest', toJobInput(request.document)));
    const { input } = request;
    if (request.async || /\brespond-async\b/i.test(c.req.header('prefer') ?? '')) return replyQueued(c, await jobs.enqueue('ingest', toJobInput(input)));
    const size = typeof input.content === 'string' ? Buffer.byteLength(input.content) : input.content.byteLength;
    if (size > ctx.config.SYNC_INGEST_MAX_BYTES) {
      throw new HttpError(
        413,
        'use_async',
        `A document of ${size} bytes may not be ingested within the request timeout (the limit for a synchronous ingest is ${ctx.config.SYNC_INGEST_MAX_BYTES} bytes): ` +
          'send it with `async: true` (or the header `Prefer: respond-async`) and follow the job at /v1/jobs/{id}',
      );
    }
    return replyIngested(c, await documentsOf(c).ingest({ ...input, signal: c.req.raw.signal }));
  });

  const listDocumentsRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listDocuments',
    tags: [TAGS.documents],
    summary: 'List documents (tag filters, cursor pagination)',
    request: { query: listDocumentsQuery },
    responses: { 200: jsonReply('One page, newest first.', documentPageSchema) },
  });
  defineRoute(routes, listDocumentsRoute, async (c) => {
    const options = parseQuery(c, listDocumentsQuery, { lists: TAG_LIST_PARAMS });
    return c.json(await documentsOf(c).list(options));
  });

  const getDocumentRoute = createRoute({
    method: 'get',
    path: '/{id}',
    operationId: 'getDocument',
    tags: [TAGS.documents],
    summary: 'Read a document',
    request: { params: documentIdParams },
    responses: { 200: jsonReply('The document.', documentReplySchema), 404: documentNotFoundResponse },
  });
  defineRoute(routes, getDocumentRoute, async (c) => {
    const { id } = idParam(c, documentIdParams);
    const document = await documentsOf(c).get(id);
    if (!document) throw documentNotFound(id);
    return c.json({ document });
  });

  const listDocumentChunksRoute = createRoute({
    method: 'get',
    path: '/{id}/chunks',
    operationId: 'listDocumentChunks',
    tags: [TAGS.documents],
    summary: "A document's chunks, in order",
    request: { params: documentIdParams, query: listChunksQuery },
    responses: { 200: jsonReply('One page of chunks.', chunkPageSchema), 404: documentNotFoundResponse },
  });
  defineRoute(routes, listDocumentChunksRoute, async (c) => {
    const { id } = idParam(c, documentIdParams);
    const page = await documentsOf(c).chunks(id, parseQuery(c, listChunksQuery));
    if (!page) throw documentNotFound(id);
    return c.json(page);
  });

  const deleteDocumentRoute = createRoute({
    method: 'delete',
    path: '/{id}',
    operationId: 'deleteDocument',
    tags: [TAGS.documents],
    summary: 'Delete a document with its chunks',
    request: { params: documentIdParams },
    responses: { 204: { description: 'Deleted.' }, 404: documentNotFoundResponse },
  });
  defineRoute(routes, deleteDocumentRoute, async (c) => {
    const { id } = idParam(c, documentIdParams);
    if (!(await documentsOf(c).delete(id))) throw documentNotFound(id);
    await recordAudit(ctx, c, { action: 'document.deleted', details: { id } });
    return c.body(null, 204);
  });

  return routes;
}

function isForm(c: Context): boolean {
  const type = c.req.header('content-type')?.toLowerCase() ?? '';
  return type.startsWith('multipart/form-data') || type.startsWith('application/x-www-form-urlencoded');
}

/** What a POST asks for: one document (now or as a job), or a batch of them. */
type IngestRequest =
  | { kind: 'document'; input: IngestDocumentInput; async: boolean }
  | { kind: 'batch'; batch: JobDocument[] }
  /** A URL is fetched by a worker: always a job. */
  | { kind: 'url'; document: JobDocument };

/** A document a job ingests: its text or bytes, or a URL the worker fetches. */
type JobDocument = Omit<IngestDocumentInput, 'content' | 'signal' | 'format'> & {
  content?: string | Uint8Array;
  format?: IngestDocumentInput['format'];
  url?: string;
};

async function jsonRequest(c: Context): Promise<IngestRequest> {
  const raw = await readJsonBody(c);
  if (raw === undefined) throw invalidJson('The request body is empty; a JSON object (or a multipart file upload) is expected');
  const has = (key: string) => typeof raw === 'object' && raw !== null && !Array.isArray(raw) && key in raw;
  if (has('documents')) return { kind: 'batch', batch: parseWith(ingestBatchBody, raw, 'body').documents.map(fromJson) };
  if (has('url')) return { kind: 'url', document: fromJson(parseWith(ingestUrlBody, raw, 'body')) };
  const { async, ...fields } = parseWith(ingestJsonBody, raw, 'body');
  return { kind: 'document', input: fromJson(fields) as IngestDocumentInput, async: async ?? false };
}

function fromJson(body: Record<string, unknown>): JobDocument {
  const {
    text,
    url,
    maxTokens,
    overlapTokens,
    passageTokens,
    async: _async,
    ...rest
  } = body as Record<string, unknown> & {
    text?: string;
    url?: string;
    maxTokens?: number;
    overlapTokens?: number;
    passageTokens?: number;
  };
  return {
    ...(rest as Omit<JobDocument, 'content' | 'url'>),
    ...(text !== undefined ? { content: text } : {}),
    ...(url !== undefined ? { url } : {}),
    chunking: { maxTokens, overlapTokens, passageTokens },
  };
}

async function formRequest(c: Context): Promise<IngestRequest> {
  let form: Record<string, string | File | (string | File)[]>;
  try {
    form = await c.req.parseBody({ all: true });
  } catch (err) {
    throw validationError([{ path: '', message: `the multipart body cannot be read: ${(err as Error).message}` }], 'body');
  }
  const { file, ...fields } = form;
  if (file === undefined) throw validationError([{ path: 'file', message: 'a file is required in a multipart upload' }], 'body');
  const files = Array.isArray(file) ? file : [file];
  if (files.some((f) => typeof f === 'string')) throw validationError([{ path: 'file', message: 'must be uploaded files, not text fields' }], 'body');
  // The name becomes the default title, and Postgres text cannot hold NUL.
  if ((files as File[]).some((f) => f.name.includes('\u0000'))) {
    throw validationError([{ path: 'file', message: 'the file name must not contain NUL (\\u0000) characters' }], 'body');
  }
  const strings: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(fields)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v !== 'string')) throw validationError([{ path: name, message: 'must be a text field, not a file' }], 'body');
    // Only tags may repeat; any other field given twice stays an array and fails validation.
    strings[name] = values.length === 1 ? (values[0] as string) : (values as string[]);
  }
  const { format, maxTokens, overlapTokens, passageTokens, async, ...rest } = parseWith(ingestFormFields, strings, 'body');
  const inputs = await Promise.all(
    (files as File[]).map(async (f) => ({
      ...rest,
      content: new Uint8Array(await f.arrayBuffer()),
      filename: f.name,
      format: format ?? detectFormat(f.name, f.type),
      chunking: { maxTokens, overlapTokens, passageTokens },
    })),
  );
  // Several files: one batch job, each file an item of it (a title, if given, would name them all alike).
  if (inputs.length > 1) return { kind: 'batch', batch: inputs.map(({ title: _t, ...input }) => input) };
  return { kind: 'document', input: inputs[0]!, async };
}

/** A job's input: parameters in its payload, the text or file as its content. */
function toJobInput(document: JobDocument): JobInput {
  const { content, signal: _s, ...payload } = document as JobDocument & { signal?: unknown };
  return { payload: JSON.parse(JSON.stringify(payload)) as Record<string, unknown>, content: content ?? null };
}

function replyQueued(c: Context, job: Job) {
  c.header('Location', `/v1/jobs/${job.id}`);
  return c.json({ job: jobView(job) }, 202);
}

function replyIngested(c: Context, result: IngestResult) {
  if (result.status !== 'created') return c.json(result, 200);
  c.header('Location', `/v1/documents/${result.document.id}`);
  return c.json(result, 201);
}

function documentNotFound(id: string) {
  return notFound(`No document with id ${JSON.stringify(id)}`);
}
