import { type Context, Hono } from 'hono';
import type { AppContext } from '../../app-context.js';
import type { IngestDocumentInput } from '../../documents/ingest/ingest-pipeline.js';
import type { IngestResult } from '../../documents/stored-document.js';
import { detectFormat } from '../../documents/parsers/document-format.js';
import { invalidJson, notFound, validationError } from '../errors.js';
import { TAG_LIST_PARAMS } from '../schemas/memory-schemas.js';
import { documentIdParams, ingestFormFields, ingestJsonBody, listChunksQuery, listDocumentsQuery } from '../schemas/document-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseQuery, parseWith, readJsonBody } from '../validate.js';

/**
 * `/v1/documents`: ingest (JSON text or a multipart file upload), list, read, list chunks, delete.
 * Parse errors become 415 (unsupported type) or 422 (corrupt or empty file) in the app's error handler.
 */
export function createDocumentRoutes(ctx: AppContext): Hono {
  // The request's tenant's documents only: another tenant's id is a 404, like a missing one.
  const documentsOf = (c: Context) => ctx.documents.forTenant(tenantOf(c));
  const routes = new Hono();

  routes.post('/', async (c) => {
    const input = isForm(c) ? await formInput(c) : await jsonInput(c);
    return replyIngested(c, await documentsOf(c).ingest({ ...input, signal: c.req.raw.signal }));
  });

  routes.get('/', async (c) => {
    const options = parseQuery(c, listDocumentsQuery, { lists: TAG_LIST_PARAMS });
    return c.json(await documentsOf(c).list(options));
  });

  routes.get('/:id', async (c) => {
    const { id } = idOf(c);
    const document = await documentsOf(c).get(id);
    if (!document) throw documentNotFound(id);
    return c.json({ document });
  });

  routes.get('/:id/chunks', async (c) => {
    const { id } = idOf(c);
    const page = await documentsOf(c).chunks(id, parseQuery(c, listChunksQuery));
    if (!page) throw documentNotFound(id);
    return c.json(page);
  });

  routes.delete('/:id', async (c) => {
    const { id } = idOf(c);
    if (!(await documentsOf(c).delete(id))) throw documentNotFound(id);
    return c.body(null, 204);
  });

  return routes;
}

function isForm(c: Context): boolean {
  const type = c.req.header('content-type')?.toLowerCase() ?? '';
  return type.startsWith('multipart/form-data') || type.startsWith('application/x-www-form-urlencoded');
}

async function jsonInput(c: Context): Promise<IngestDocumentInput> {
  const raw = await readJsonBody(c);
  if (raw === undefined) throw invalidJson('The request body is empty; a JSON object (or a multipart file upload) is expected');
  const { text, format, maxTokens, overlapTokens, passageTokens, ...rest } = parseWith(ingestJsonBody, raw, 'body');
  return { ...rest, content: text, format, chunking: { maxTokens, overlapTokens, passageTokens } };
}

async function formInput(c: Context): Promise<IngestDocumentInput> {
  let form: Record<string, string | File | (string | File)[]>;
  try {
    form = await c.req.parseBody({ all: true });
  } catch (err) {
    throw validationError([{ path: '', message: `the multipart body cannot be read: ${(err as Error).message}` }], 'body');
  }
  const { file, ...fields } = form;
  if (file === undefined) throw validationError([{ path: 'file', message: 'a file is required in a multipart upload' }], 'body');
  if (Array.isArray(file) || typeof file === 'string') {
    throw validationError([{ path: 'file', message: 'must be exactly one uploaded file' }], 'body');
  }
  // The name becomes the default title, and Postgres text cannot hold NUL.
  if (file.name.includes('\u0000')) throw validationError([{ path: 'file', message: 'the file name must not contain NUL (\\u0000) characters' }], 'body');
  const strings: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(fields)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v !== 'string')) throw validationError([{ path: name, message: 'must be a text field, not a file' }], 'body');
    // Only tags may repeat; any other field given twice stays an array and fails validation.
    strings[name] = values.length === 1 ? (values[0] as string) : (values as string[]);
  }
  const { format, maxTokens, overlapTokens, passageTokens, ...rest } = parseWith(ingestFormFields, strings, 'body');
  return {
    ...rest,
    content: new Uint8Array(await file.arrayBuffer()),
    filename: file.name,
    format: format ?? detectFormat(file.name, file.type),
    chunking: { maxTokens, overlapTokens, passageTokens },
  };
}

function replyIngested(c: Context, result: IngestResult) {
  if (result.status !== 'created') return c.json(result, 200);
  c.header('Location', `/v1/documents/${result.document.id}`);
  return c.json(result, 201);
}

function idOf(c: Context): { id: string } {
  return parseWith(documentIdParams, { id: c.req.param('id') }, 'path');
}

function documentNotFound(id: string) {
  return notFound(`No document with id ${JSON.stringify(id)}`);
}
