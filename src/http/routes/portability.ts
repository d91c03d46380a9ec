import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { stream } from 'hono/streaming';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportRecord } from '../../portability/export-lines.js';
import { fromMem0 } from '../../portability/mem0-memories.js';
import { IMPORT_JOB_MAX_ERRORS, type ImportItem, SYNC_IMPORT_MAX_RECORDS, queueImport, recordsOf } from '../../portability/import-job.js';
import { IMPORT_MEMORY_BATCH, type ImportReport, createTenantImport } from '../../portability/tenant-import.js';
import { tenantExport } from '../../portability/tenant-export.js';
import type { ApiEnv } from '../api-env.js';
import { invalidJson, validationError } from '../../api/errors.js';
import { recordAudit } from '../audit-record.js';
import { jobView } from '../job-view.js';
import { ndjsonLines } from '../ndjson-lines.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { header, jsonReply } from '../openapi/route-responses.js';
import {
  agentLineSchema,
  workflowLineSchema,
  conversationLineSchema,
  documentLineSchema,
  exportHeaderSchema,
  exportQuery,
  exportRecordDocSchema,
  importQuery,
  importReplySchema,
  mem0BodySchema,
  mem0ItemSchema,
  memoryLineSchema,
} from '../../api/schemas/portability-schemas.js';
import { jobReplySchema } from '../../api/schemas/job-schemas.js';
import { blockLineSchema } from '../../api/schemas/block-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseQuery, parseWith, readJsonBody, toFieldIssues } from '../validate.js';

const NDJSON = 'application/x-ndjson';
const MAX_SYNC = SYNC_IMPORT_MAX_RECORDS.toLocaleString('en-US');

const RECORD_SCHEMAS = {
  memory: memoryLineSchema,
  agent: agentLineSchema,
  conversation: conversationLineSchema,
  document: documentLineSchema,
  block: blockLineSchema,
  workflow: workflowLineSchema,
} as const;

/** `/v1/export` and `/v1/import`: a tenant's memories (with their history), agents and conversations as NDJSON, and back. */
export function createPortabilityRoutes(ctx: AppContext): ApiRoutes {
  const routes = createApiRoutes();
  const partsOf = (c: Context<ApiEnv>) => {
    const tenantId = tenantOf(c);
    return {
      db: ctx.database.db,
      embedder: ctx.embedder,
      tenantId,
      conversations: ctx.conversations.forTenant(tenantId),
      documents: ctx.documents.forTenant(tenantId),
    };
  };

  const exportRoute = createRoute({
    method: 'get',
    path: '/export',
    operationId: 'exportTenant',
    tags: [TAGS.portability],
    summary: "Export the tenant's memories, agents and conversations as NDJSON",
    description:
      'A header line (`{"type":"header","format":"memrag.export","version":1,...}`), then one line per record: memories with ' +
      'their full history (by agent, user and key), agents with every version (by id), conversations with their messages, ' +
      'checkpoints and summary (by id), and with `include=documents` documents with their text (by id). Streamed as it is ' +
      'read, a page at a time. `agentId` and `userId` narrow it. Two ' +
      'exports of the same data are identical but for `exportedAt`. `POST /v1/import` takes it back.',
    request: { query: exportQuery },
    responses: {
      200: {
        description: 'The export, one JSON object per line.',
        headers: z.object({ 'Content-Disposition': header('`attachment; filename="memrag-export.ndjson"`') }),
        content: { [NDJSON]: { schema: z.union([exportHeaderSchema, exportRecordDocSchema]) } },
      },
    },
  });
  defineRoute(routes, exportRoute, async (c) => {
    const { agentId, userId, include } = parseQuery(c, exportQuery);
    await recordAudit(ctx, c, { action: 'tenant.exported', userId: userId ?? null, details: { agentId: agentId ?? null, include: include ?? null } });
    const lines = tenantExport(partsOf(c), {
      ...(agentId !== undefined ? { agentId } : {}),
      ...(userId !== undefined ? { userId } : {}),
      ...(include !== undefined ? { include: [include] } : {}),
    });
    c.header('Content-Type', NDJSON);
    c.header('Content-Disposition', 'attachment; filename="memrag-export.ndjson"');
    return stream(
      c,
      async (out) => {
        // Stop reading pages once the client has gone.
        out.onAbort(() => void lines.return(undefined));
        for await (const line of lines) await out.write(`${JSON.stringify(line)}\n`);
      },
      async (err) => {
        // The status is sent already: the export ends short, and the log says why.
        ctx.logger.error({ err }, 'export failed while streaming');
      },
    );
  });

  const importRoute = createRoute({
    method: 'post',
    path: '/import',
    operationId: 'importTenant',
    tags: [TAGS.portability],
    summary: 'Import an export of `GET /v1/export` (NDJSON), or Mem0 memories (`format=mem0`)',
    description:
      "Into the request's tenant, keeping keys, ids (when free), times and history; memories are embedded with this server's " +
      "embedder and indexed for search. Idempotent: records the tenant holds already (a memory's scope and key, a " +
      "conversation's id, an agent's id) are counted in `skipped` and left as they are. A line that is not JSON, of an unknown " +
      '`type` or against the schema is reported in `errors` with its 1-based number, and the rest is imported; with ' +
      '`atomic=true`, nothing is imported when any line fails. The first line must be the header: another format or version ' +
      'is a 400. With `format=mem0` the body is Mem0\'s export JSON (`{"results": [...]}` or the plain array): each item becomes ' +
      "a memory keyed `mem0:<id>`, its `categories` as tags and its id in `metadata.mem0Id`; an item's error names its " +
      '1-based position as `line`. The upload size limit applies, not the body limit. The file is read and checked first; ' +
      `one of more than ${MAX_SYNC} records (lines after the header; Mem0: items), or any with \`async=true\`, is then stored with an ` +
      '`import` job and answered `202 {job}` (follow it at `/v1/jobs/{id}`: its progress counts items done of `total` with the ' +
      `counts so far, its result is the report, with the first ${IMPORT_JOB_MAX_ERRORS} \`errors\` by line and \`errorCount\` counting them all); ` +
      '`async=false` imports even a larger file within the request.',
    request: {
      query: importQuery,
      body: {
        required: true,
        content: {
          [NDJSON]: { schema: z.string().meta({ description: 'An export of `GET /v1/export`.' }) },
          // A header alone is an export of one line, which JSON clients send as such.
          'application/json': {
            schema: z
              .union([mem0BodySchema, exportHeaderSchema])
              .meta({ description: "With `format=mem0`, Mem0's memories; else an export's header alone (it imports nothing)." }),
          },
        },
      },
    },
    responses: {
      200: jsonReply('What was imported, skipped and refused.', importReplySchema),
      202: jsonReply(
        `Queued as an \`import\` job (\`async=true\`, or more than ${MAX_SYNC} records): follow it at \`Location\`; its result is the report, its \`errors\` the first ${IMPORT_JOB_MAX_ERRORS} (\`errorCount\`: all of them).`,
        jobReplySchema,
        z.object({ Location: header('The job: `/v1/jobs/{id}`.') }),
      ),
    },
  });
  defineRoute(routes, importRoute, async (c) => {
    const query = parseQuery(c, importQuery);
    // An export names its own agents and users: taking these for a retarget would be a silent no-op.
    for (const field of ['agentId', 'userId'] as const) {
      if (query.format !== 'mem0' && query[field] !== undefined) throw validationError([{ path: field, message: 'applies to format=mem0 only' }], 'query');
    }
    const atomic = query.atomic === 'true';
    // The whole file is read and checked first: a 400 (the header) comes before anything is written or queued.
    const items: ImportItem[] = [];
    const fail = (line: number, error: string) => items.push({ line, error });
    const accept = (line: number, record: ExportRecord) => items.push({ line, record });

    if (query.format === 'mem0') {
      const body = await readJsonBody(c);
      if (body === undefined) throw invalidJson('The request body is empty; Mem0 memories as JSON are expected');
      const parsedBody = parseWith(mem0BodySchema, body, 'body');
      const importedAt = new Date();
      for (const [i, raw] of (Array.isArray(parsedBody) ? parsedBody : parsedBody.results).entries()) {
        const parsed = mem0ItemSchema.safeParse(raw);
        if (!parsed.success) fail(i + 1, describeIssues(parsed.error));
        else accept(i + 1, { type: 'memory', ...fromMem0(parsed.data, { tenantId: tenantOf(c), agentId: query.agentId, userId: query.userId }, importedAt) });
      }
    } else {
      let sawHeader = false;
      for await (const { line, text } of ndjsonLines(c.req.raw.body)) {
        if (text.trim() === '') continue;
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (err) {
          if (!sawHeader) throw invalidJson(`line ${line}: the header is not valid JSON: ${(err as Error).message}`);
          fail(line, `not valid JSON: ${(err as Error).message}`);
          continue;
        }
        if (!sawHeader) {
          checkHeader(value, line);
          sawHeader = true;
          continue;
        }
        const type = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { type?: unknown }).type : undefined;
        const schema = typeof type === 'string' && Object.hasOwn(RECORD_SCHEMAS, type) ? RECORD_SCHEMAS[type as keyof typeof RECORD_SCHEMAS] : undefined;
        if (!schema) {
          fail(line, `unknown record type ${shown(type)}: expected memory, agent, conversation or document`);
          continue;
        }
        const parsed = schema.safeParse(value);
        if (!parsed.success) fail(line, describeIssues(parsed.error));
        else accept(line, parsed.data as ExportRecord);
      }
      if (!sawHeader) throw validationError([{ path: 'header', message: `the first line must be the header of a ${EXPORT_FORMAT} export` }], 'body');
    }

    const importer = createTenantImport(partsOf(c));
    for (const item of items) if ('error' in item) importer.fail(item.line, item.error);
    // Nothing is written while any line failed to read: the report lists them all, and no job is queued.
    if (atomic && importer.report.errors.length > 0) return c.json(await importer.finish(), 200);
    if (query.async === 'true' || (query.async === undefined && items.length > SYNC_IMPORT_MAX_RECORDS)) {
      const job = await queueImport(ctx.jobs.forTenant(tenantOf(c)), items, { format: query.format });
      await recordAudit(ctx, c, { action: 'tenant.imported', details: { format: query.format ?? 'memrag', jobId: job.id, lines: items.length } });
      c.header('Location', `/v1/jobs/${job.id}`);
      return c.json({ job: jobView(job) }, 202);
    }
    const records = items.flatMap((item) => ('record' in item ? [item] : []));
    for (const [i, { line, record }] of records.entries()) {
      // At each batch's start, the next batch's memories start embedding while this one is written.
      if (i % IMPORT_MEMORY_BATCH === 0) importer.lookAhead(recordsOf(records.slice(i + IMPORT_MEMORY_BATCH, i + 2 * IMPORT_MEMORY_BATCH)));
      await importer.add(line, record);
    }
    const report: ImportReport = await importer.finish();
    await recordAudit(ctx, c, {
      action: 'tenant.imported',
      details: { format: query.format ?? 'memrag', lines: items.length, imported: report.imported, skipped: report.skipped, errors: report.errors.length },
    });
    return c.json(report, 200);
  });

  return routes;
}

function checkHeader(value: unknown, line: number): void {
  const header = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (header.type !== 'header') {
    throw validationError([{ path: 'header', message: `line ${line} must be the header ({"type":"header","format":"${EXPORT_FORMAT}",...})` }], 'body');
  }
  if (header.format !== EXPORT_FORMAT) {
    throw validationError([{ path: 'header.format', message: `${shown(header.format)} is not an export this server reads (${EXPORT_FORMAT})` }], 'body');
  }
  if (header.version !== EXPORT_VERSION) {
    throw validationError([{ path: 'header.version', message: `version ${shown(header.version)} is not one this server reads (${EXPORT_VERSION})` }], 'body');
  }
  parseWith(
    exportHeaderSchema.transform(() => undefined),
    value,
    'body',
  );
}

/** A value for a message: scalars as JSON (clipped), anything else by its kind, which cannot be nested deep enough to overflow the stack. */
function shown(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

function describeIssues(error: z.ZodError): string {
  return toFieldIssues(error)
    .slice(0, 10)
    .map((i) => (i.path ? `${i.path}: ${i.message}` : i.message))
    .join('; ');
}
