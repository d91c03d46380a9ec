import type { RouteConfig } from '@hono/zod-openapi';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { errorReplySchema, errorReplyWith } from '../../api/schemas/error-reply-schemas.js';
import { TAGS, TAG_DESCRIPTIONS } from './api-tags.js';
import { type JsonSchema, JsonSchemaComponents } from './json-schema-components.js';
import { type ErrorSpec, type RouteResponse, errorSpecOf, retryAfterHeader } from './route-responses.js';
import { isOpenAiCompatiblePath } from '../openai-compatible/openai-error.js';
import { openAiErrorSchema } from '../../api/schemas/openai-schemas.js';

/**
 * How this server is configured, where that changes what a client sees (limits, keys, errors).
 * What the routes' own schemas follow (MAX_TOP_K, the rerankers) is in their declarations.
 */
export interface OpenApiDocumentOptions {
  apiKeys: boolean;
  rateLimit: boolean;
  requestTimeout: boolean;
  /** MAX_CONCURRENT_REQUESTS is on: a request may be shed with 503 `overloaded`. */
  admission: boolean;
  maxBodyBytes: number;
  maxUploadBytes: number;
}

export type OpenApiDocument = Record<string, unknown>;

/** An error reply under its status. */
type StatusError = ErrorSpec & { status: number };

/** The version of the `/v1` API contract, not of the package: bump it with the API. */
const API_VERSION = '1.0.0';

const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  agentId: 'The agent whose memories these are (default `default`); each agent id is a namespace of its own.',
  tagsAny: 'At least one of these tags. Repeat the parameter or separate tags by commas.',
  tagsAll: 'Every one of these tags. Repeat the parameter or separate tags by commas.',
  tagsNone: 'None of these tags. Repeat the parameter or separate tags by commas.',
  limit: 'Items per page.',
  cursor: "The previous page's `nextCursor`.",
  key: "The memory's key (URL-encoded).",
  id: 'The id of the document, conversation or agent.',
  version: "The agent's version: 1, 2, 3…",
};

export function openApiOptionsFrom(ctx: AppContext): OpenApiDocumentOptions {
  const { config } = ctx;
  return {
    // As known when the document is first served: keys created later turn authentication on, not the document.
    apiKeys: ctx.auth.required,
    rateLimit: config.RATE_LIMIT_PER_MINUTE > 0,
    requestTimeout: config.REQUEST_TIMEOUT_MS > 0,
    admission: config.MAX_CONCURRENT_REQUESTS > 0,
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
  };
}

/** Hono's `/v1/memories/:key` (or `:key{regex}`) as OpenAPI's `/v1/memories/{key}`. */
export function toOpenApiPath(honoPath: string): string {
  return honoPath.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}');
}

/**
 * The OpenAPI 3.1 document of the API, generated from the routes' declarations (see
 * define-route.ts): the zod schemas the routes validate with (request bodies, query and path
 * parameters), their replies and their own errors. It describes this server as configured: API
 * keys, rate limit and timeout errors appear when on.
 */
export function createOpenApiDocument(routes: readonly RouteConfig[], options: OpenApiDocumentOptions): OpenApiDocument {
  const components = new JsonSchemaComponents();
  // Named even where no response uses it whole, so clients have the generic shape of every error.
  components.convert(errorReplySchema);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    if (paths[route.path]![route.method]) throw new Error(`${route.method.toUpperCase()} ${route.path} is declared twice`);
    paths[route.path]![route.method] = describeOperation(route, options, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'memrag API',
      version: API_VERSION,
      description: [
        'A memory-centric RAG agent backend: memories, documents, retrieval and a grounded chat.',
        '',
        'Every error is JSON: `{"error":{"code","message","details"}}`, where `details` names each rejected field of a 400. ' +
          'Request objects are strict: an unknown field is a 400. Strings must not contain NUL or unpaired UTF-16 surrogates, ' +
          'and required text must not be blank; these checks are not expressible in the schemas below.',
        '',
        `Bodies past ${options.maxBodyBytes} bytes (${options.maxUploadBytes} for \`POST /v1/documents\` and \`POST /v1/conversations/import\`) answer 413. ` +
          "Every reply carries `X-Request-Id` (the caller's, when it sent a usable one).",
        options.apiKeys ? '\nEvery `/v1` route needs `Authorization: Bearer <key>`.' : '\nNo API keys are configured on this server: `/v1` is open.',
      ].join('\n'),
    },
    tags: Object.values(TAGS).map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
    paths,
    components: {
      schemas: components.schemas,
      ...(options.apiKeys
        ? {
            securitySchemes: {
              bearerAuth: {
                type: 'http',
                scheme: 'bearer',
                description: 'An API key: one of API_KEYS, or one made with `npm run keys -- create`. The key decides the tenant whose data the request sees.',
              },
            },
          }
        : {}),
    },
  };
}

function describeOperation(route: RouteConfig, options: OpenApiDocumentOptions, components: JsonSchemaComponents): Record<string, unknown> {
  const { method, path, request, responses: declared, ...operation } = route;
  const parameters = [...parametersOf(request?.params, 'path', components), ...parametersOf(request?.query, 'query', components)];
  const isApi = path.startsWith('/v1/');
  const responses: Record<string, unknown> = {};
  const ownErrors: StatusError[] = [];
  for (const [status, response] of Object.entries(declared)) {
    if ('$ref' in response) throw new Error(`${method.toUpperCase()} ${path}: ${status} is a $ref; declare the reply itself`);
    const error = errorSpecOf(response);
    if (error) {
      ownErrors.push({ ...error, status: Number(status) });
      continue;
    }
    responses[status] = describeReply(response, components);
  }
  for (const error of errorsOf(route, ownErrors, options)) {
    responses[String(error.status)] = {
      description: error.description,
      ...(error.headers ? { headers: headersOf(error.headers, components) } : {}),
      // The OpenAI-compatible routes answer errors in OpenAI's shape (see openai-compatible/openai-error.ts).
      content: { 'application/json': { schema: components.convert(isOpenAiCompatiblePath(path) ? openAiErrorSchema : errorReplyWith(error.codes)) } },
    };
  }
  const body = request?.body;
  return {
    ...operation,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body
      ? {
          requestBody: {
            required: body.required ?? false,
            ...(body.description ? { description: body.description } : {}),
            content: contentOf(body.content, components),
          },
        }
      : {}),
    responses,
    ...(isApi && options.apiKeys ? { security: [{ bearerAuth: [] }] } : {}),
  };
}

function describeReply(reply: RouteResponse, components: JsonSchemaComponents): Record<string, unknown> {
  return {
    description: reply.description,
    ...(reply.headers ? { headers: headersOf(reply.headers, components) } : {}),
    ...(reply.content ? { content: contentOf(reply.content, components) } : {}),
  };
}

type RouteParameters = NonNullable<RouteConfig['request']>['query'];

function parametersOf(schema: RouteParameters, location: 'path' | 'query', components: JsonSchemaComponents): unknown[] {
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

function contentOf(content: NonNullable<RouteResponse['content']>, components: JsonSchemaComponents): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(content).map(([mediaType, media]) => {
      const schema = media && 'schema' in media ? media.schema : undefined;
      if (!(schema instanceof z.ZodType)) throw new Error(`${mediaType}: declare content with a zod schema`);
      return [mediaType, { schema: components.convert(schema) }];
    }),
  );
}

function headersOf(headers: NonNullable<RouteResponse['headers']>, components: JsonSchemaComponents): Record<string, unknown> {
  if (!(headers instanceof z.ZodObject)) throw new Error('declare reply headers as a z.object of header schemas');
  return Object.fromEntries(
    Object.entries(headers.shape).map(([name, schema]) => {
      // The header's description (`header()` puts it in the schema's meta) belongs to the header object.
      const { description, ...converted } = components.convert(schema as z.ZodType, 'output');
      return [name, { ...(description === undefined ? {} : { description }), schema: converted }];
    }),
  );
}

/** The route's own errors, merged with those the app answers for every route of its kind. */
function errorsOf(route: RouteConfig, own: StatusError[], options: OpenApiDocumentOptions): StatusError[] {
  const isApi = route.path.startsWith('/v1/');
  const hasBody = Boolean(route.request?.body);
  const common: StatusError[] = [];
  // Every route refuses query parameters it does not declare (see defineRoute), inputs or none.
  common.push({
    status: 400,
    codes: hasBody ? ['validation_error', 'invalid_json'] : ['validation_error'],
    description: `Invalid request: \`validation_error\` names each offending field in \`details\`, a query parameter the route does not declare included${hasBody ? '; `invalid_json` for a body that is not JSON' : ''}.`,
  });
  if (isApi && options.apiKeys) common.push({ status: 401, codes: ['unauthorized'], description: 'No API key, or not a valid one.' });
  if (isApi && options.apiKeys) common.push({ status: 403, codes: ['forbidden'], description: 'The API key lacks the scope this route needs.' });
  if (hasBody) common.push({ status: 413, codes: ['payload_too_large'], description: 'The body is past the size limit.' });
  if (isApi && options.rateLimit) {
    common.push({
      status: 429,
      codes: ['rate_limited'],
      description: "Past this client's request rate (RATE_LIMIT_PER_MINUTE).",
      headers: retryAfterHeader('Seconds until a request will be accepted.'),
    });
  }
  // The chat bounds its own model calls; its streams are never cut by the request timeout.
  if (isApi && options.requestTimeout && route.path !== '/v1/chat' && route.path !== '/v1/chat/completions') {
    common.push({ status: 504, codes: ['request_timeout'], description: 'Not done within REQUEST_TIMEOUT_MS; the work was aborted.' });
  }
  common.push({ status: 500, codes: ['internal_error'], description: 'An unexpected failure; the cause is in the server log.' });
  if (isApi) {
    common.push({
      status: 503,
      codes: ['database_unavailable'],
      description:
        'The database cannot be reached (down, restarting, out of connections) or did not answer within DATABASE_STATEMENT_TIMEOUT_MS. Retry after the delay given.',
      headers: retryAfterHeader(),
    });
  }
  // Event streams are never queued (see http/middleware/concurrency-limit.ts).
  if (isApi && options.admission && !route.path.endsWith('/events')) {
    common.push({
      status: 429,
      codes: ['rate_limited'],
      description:
        "Past this tenant's share of the requests run at once (TENANT_MAX_CONCURRENT): its queue was full, or the request waited QUEUE_TIMEOUT_MS; it was not run.",
      headers: retryAfterHeader('Seconds until a request will be accepted.'),
    });
    common.push({
      status: 503,
      codes: ['overloaded'],
      description:
        '`overloaded`: the server is at MAX_CONCURRENT_REQUESTS with MAX_QUEUED_REQUESTS waiting, or the request waited QUEUE_TIMEOUT_MS for its turn; it was not run.',
      headers: retryAfterHeader(),
    });
  }

  const byStatus = new Map<number, StatusError>();
  for (const error of [...common, ...own]) {
    const seen = byStatus.get(error.status);
    if (!seen) {
      byStatus.set(error.status, error);
      continue;
    }
    const headers = seen.headers || error.headers ? { headers: z.object({ ...seen.headers?.shape, ...error.headers?.shape }) } : {};
    byStatus.set(error.status, {
      status: error.status,
      codes: [...new Set([...seen.codes, ...error.codes])] as ErrorSpec['codes'],
      description: `${seen.description} ${error.description}`,
      ...headers,
    });
  }
  return [...byStatus.values()].sort((a, b) => a.status - b.status);
}
