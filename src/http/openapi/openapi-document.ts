import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { errorReplySchema, errorReplyWith } from '../schemas/error-reply-schemas.js';
import { type ApiOperation, type ApiOperationsOptions, type ErrorSpec, type HeaderSpec, TAGS, apiOperations } from './api-operations.js';
import { type JsonSchema, JsonSchemaComponents } from './json-schema-components.js';

/** How this server is configured, where that changes what a client sees (limits, keys, errors). */
export interface OpenApiDocumentOptions extends ApiOperationsOptions {
  apiKeys: boolean;
  rateLimit: boolean;
  requestTimeout: boolean;
  maxBodyBytes: number;
  maxUploadBytes: number;
}

export type OpenApiDocument = Record<string, unknown>;

/** The version of the `/v1` API contract, not of the package: bump it with the API. */
const API_VERSION = '1.0.0';

const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  agentId: "The agent whose memories these are (default `default`); each agent id is a namespace of its own.",
  tagsAny: 'At least one of these tags. Repeat the parameter or separate tags by commas.',
  tagsAll: 'Every one of these tags. Repeat the parameter or separate tags by commas.',
  tagsNone: 'None of these tags. Repeat the parameter or separate tags by commas.',
  limit: 'Items per page.',
  cursor: "The previous page's `nextCursor`.",
  key: "The memory's key (URL-encoded).",
  id: 'The id of the document or conversation.',
};

const TAG_DESCRIPTIONS: Record<string, string> = {
  [TAGS.memories]: 'Memories: short facts saved per agent and key, searched by meaning and by words.',
  [TAGS.documents]: 'Documents: ingested text and files, cut into chunks for retrieval.',
  [TAGS.search]: 'Retrieval over document chunks, with citation fields.',
  [TAGS.chat]: 'Grounded answers from memories and documents.',
  [TAGS.conversations]: 'Stored chat conversations of an agent: read, export, import, delete.',
  [TAGS.operations]: 'Probes and metrics, outside `/v1`: no API key, no rate limit.',
  [TAGS.documentation]: 'This document and its interactive page.',
};

export function openApiOptionsFrom(ctx: AppContext): OpenApiDocumentOptions {
  const { config } = ctx;
  return {
    maxTopK: config.MAX_TOP_K,
    rerankers: ctx.search.rerankers,
    // As known when the document is first served: keys created later turn authentication on, not the document.
    apiKeys: ctx.auth.required,
    rateLimit: config.RATE_LIMIT_PER_MINUTE > 0,
    requestTimeout: config.REQUEST_TIMEOUT_MS > 0,
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
  };
}

/** Hono's `/v1/memories/:key` (or `:key{regex}`) as OpenAPI's `/v1/memories/{key}`. */
export function toOpenApiPath(honoPath: string): string {
  return honoPath.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}');
}

/**
 * The OpenAPI 3.1 document of the API, built from the zod schemas the routes validate with
 * (request bodies, query and path parameters) and the reply schemas in ../schemas. It
 * describes this server as configured: API keys, rate limit and timeout errors appear when on.
 */
export function createOpenApiDocument(options: OpenApiDocumentOptions): OpenApiDocument {
  const components = new JsonSchemaComponents();
  // Named even where no response uses it whole, so clients have the generic shape of every error.
  components.convert(errorReplySchema);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of apiOperations(options)) {
    const path = toOpenApiPath(operation.path);
    paths[path] ??= {};
    if (paths[path][operation.method]) throw new Error(`${operation.method.toUpperCase()} ${path} is described twice`);
    paths[path][operation.method] = describeOperation(operation, options, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'memrag API',
      version: API_VERSION,
      description: [
        "A memory-centric RAG agent backend: memories, documents, retrieval and a grounded chat.",
        '',
        'Every error is JSON: `{"error":{"code","message","details"}}`, where `details` names each rejected field of a 400. ' +
          'Request objects are strict: an unknown field is a 400. Strings must not contain NUL or unpaired UTF-16 surrogates, ' +
          'and required text must not be blank; these checks are not expressible in the schemas below.',
        '',
        `Bodies past ${options.maxBodyBytes} bytes (${options.maxUploadBytes} for \`POST /v1/documents\` and \`POST /v1/conversations/import\`) answer 413. ` +
          'Every reply carries `X-Request-Id` (the caller\'s, when it sent a usable one).',
        options.apiKeys ? '\nEvery `/v1` route needs `Authorization: Bearer <key>`.' : '\nNo API keys are configured on this server: `/v1` is open.',
      ].join('\n'),
    },
    tags: Object.values(TAGS).map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
    paths,
    components: {
      schemas: components.schemas,
      ...(options.apiKeys ? { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: one of API_KEYS, or one made with `npm run keys -- create`. The key decides the tenant whose data the request sees.' } } } : {}),
    },
  };
}

function describeOperation(operation: ApiOperation, options: OpenApiDocumentOptions, components: JsonSchemaComponents): Record<string, unknown> {
  const parameters = [
    ...parametersOf(operation.params, 'path', components),
    ...parametersOf(operation.query, 'query', components),
  ];
  const isApi = operation.path.startsWith('/v1/');
  const responses: Record<string, unknown> = {};
  for (const [status, reply] of Object.entries(operation.responses)) {
    responses[status] = {
      description: reply.description,
      ...(reply.headers ? { headers: headersOf(reply.headers, components) } : {}),
      ...(reply.content ? { content: contentOf(reply.content, components) } : {}),
    };
  }
  for (const error of errorsOf(operation, options)) {
    responses[String(error.status)] = {
      description: error.description,
      ...(error.headers ? { headers: headersOf(error.headers, components) } : {}),
      content: { 'application/json': { schema: components.convert(errorReplyWith(error.codes)) } },
    };
  }
  return {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.body
      ? {
          requestBody: {
            required: operation.body.required,
            ...(operation.body.description ? { description: operation.body.description } : {}),
            content: contentOf(operation.body.content, components),
          },
        }
      : {}),
    responses,
    ...(isApi && options.apiKeys ? { security: [{ bearerAuth: [] }] } : {}),
  };
}

function parametersOf(schema: ApiOperation['query'], location: 'path' | 'query', components: JsonSchemaComponents): unknown[] {
  if (!schema) return [];
  // The value a parameter holds after parsing (`limit` a number in range), but optional as sent (defaults apply).
  const output = components.convert(schema, 'output');
  const input = components.convert(schema, 'input');
  const required = new Set((input.required as string[] | undefined) ?? []);
  return Object.entries((output.properties ?? {}) as Record<string, JsonSchema>).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    ...(PARAMETER_DESCRIPTIONS[name] ? { description: PARAMETER_DESCRIPTIONS[name] } : {}),
    schema: property,
    ...(property.type === 'array' ? { style: 'form', explode: true } : {}),
  }));
}

function contentOf(content: NonNullable<ApiOperation['body']>['content'], components: JsonSchemaComponents): Record<string, unknown> {
  return Object.fromEntries(Object.entries(content).map(([mediaType, schema]) => [mediaType, { schema: components.convert(schema) }]));
}

function headersOf(headers: Record<string, HeaderSpec>, components: JsonSchemaComponents): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, header]) => [name, { description: header.description, schema: components.convert(header.schema, 'output') }]),
  );
}

/** The route's own errors, merged with those the app answers for every route of its kind. */
function errorsOf(operation: ApiOperation, options: OpenApiDocumentOptions): ErrorSpec[] {
  const isApi = operation.path.startsWith('/v1/');
  const hasInput = Boolean(operation.params ?? operation.query ?? operation.body);
  const common: ErrorSpec[] = [];
  if (hasInput) {
    common.push({
      status: 400,
      codes: operation.body ? ['validation_error', 'invalid_json'] : ['validation_error'],
      description: `Invalid request: \`validation_error\` names each offending field in \`details\`${operation.body ? '; `invalid_json` for a body that is not JSON' : ''}.`,
    });
  }
  if (isApi && options.apiKeys) common.push({ status: 401, codes: ['unauthorized'], description: 'No API key, or not a valid one.' });
  if (operation.body) common.push({ status: 413, codes: ['payload_too_large'], description: 'The body is past the size limit.' });
  if (isApi && options.rateLimit) {
    common.push({
      status: 429,
      codes: ['rate_limited'],
      description: "Past this client's request rate (RATE_LIMIT_PER_MINUTE).",
      headers: { 'Retry-After': { description: 'Seconds until a request will be accepted.', schema: z.number().int().min(1) } },
    });
  }
  // The chat bounds its own model calls; its streams are never cut by the request timeout.
  if (isApi && options.requestTimeout && operation.path !== '/v1/chat') {
    common.push({ status: 504, codes: ['request_timeout'], description: 'Not done within REQUEST_TIMEOUT_MS; the work was aborted.' });
  }
  common.push({ status: 500, codes: ['internal_error'], description: 'An unexpected failure; the cause is in the server log.' });
  if (isApi) {
    common.push({
      status: 503,
      codes: ['database_unavailable'],
      description: 'The database cannot be reached (down, restarting, out of connections). Retry after the delay given.',
      headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: z.number().int().min(1) } },
    });
  }

  const byStatus = new Map<number, ErrorSpec>();
  for (const error of [...common, ...(operation.errors ?? [])]) {
    const seen = byStatus.get(error.status);
    if (!seen) {
      byStatus.set(error.status, error);
      continue;
    }
    const headers = seen.headers || error.headers ? { headers: { ...seen.headers, ...error.headers } } : {};
    byStatus.set(error.status, {
      status: error.status,
      codes: [...new Set([...seen.codes, ...error.codes])] as [string, ...string[]],
      description: `${seen.description} ${error.description}`,
      ...headers,
    });
  }
  return [...byStatus.values()].sort((a, b) => a.status - b.status);
}
