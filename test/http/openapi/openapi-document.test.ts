import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/app-context.js';
import type { RerankerChoice } from '../../../src/retrieval/rerank/reranker-choice.js';
import { declaredRoutes } from '../../../src/http/openapi/define-route.js';
import { type OpenApiDocumentOptions, createOpenApiDocument as documentOf, toOpenApiPath } from '../../../src/http/openapi/openapi-document.js';
import { createApp, createTestContext } from '../http-test-context.js';
import { documentValidator } from './document-validator.js';

/** The server's configuration as far as the document shows it: the routes' limits, then the app's. */
type DocumentConfig = OpenApiDocumentOptions & { maxTopK: number; rerankers: RerankerChoice[] };

let ctx: AppContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** The document of an app whose routes are built for `config` (MAX_TOP_K, the rerankers on the server). */
function createOpenApiDocument(config: DocumentConfig) {
  const app = createApp({ ...ctx, config: { ...ctx.config, MAX_TOP_K: config.maxTopK }, search: { ...ctx.search, rerankers: config.rerankers } });
  return documentOf(declaredRoutes(app), config);
}

const plain: DocumentConfig = {
  maxTopK: 100,
  rerankers: ['none', 'lexical'],
  apiKeys: false,
  rateLimit: false,
  requestTimeout: false,
  admission: false,
  maxBodyBytes: 1_048_576,
  maxUploadBytes: 20_971_520,
};
const everything: DocumentConfig = {
  ...plain,
  rerankers: ['none', 'lexical', 'cross-encoder'],
  apiKeys: true,
  rateLimit: true,
  requestTimeout: true,
  admission: true,
};

/** Every JSON Schema in the document: components, parameters, bodies, replies and headers. */
function schemasOf(document: any): { where: string; schema: any }[] {
  const found: { where: string; schema: any }[] = [];
  for (const [name, schema] of Object.entries(document.components.schemas)) found.push({ where: `components.schemas.${name}`, schema });
  for (const [path, operations] of Object.entries<any>(document.paths)) {
    for (const [method, op] of Object.entries<any>(operations)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) found.push({ where: `${at} parameter ${p.name}`, schema: p.schema });
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) found.push({ where: `${at} body ${type}`, schema: media.schema });
      for (const [status, reply] of Object.entries<any>(op.responses)) {
        for (const [type, media] of Object.entries<any>(reply.content ?? {})) found.push({ where: `${at} ${status} ${type}`, schema: media.schema });
        for (const [name, header] of Object.entries<any>(reply.headers ?? {})) found.push({ where: `${at} ${status} header ${name}`, schema: header.schema });
      }
    }
  }
  return found;
}

describe('createOpenApiDocument', () => {
  it.each([
    ['a plain server', plain],
    ['a server with keys, a rate limit, a timeout and a cross-encoder', everything],
  ])('is a valid OpenAPI 3.1 document for %s', async (_name, options) => {
    const validator = new Validator();
    const result = await validator.validate(createOpenApiDocument(options));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('holds only JSON Schemas that a strict draft 2020-12 validator compiles', () => {
    const document = createOpenApiDocument(everything);
    const { compile } = documentValidator(document);
    const schemas = schemasOf(document);
    expect(schemas.length).toBeGreaterThan(50);
    for (const { where, schema } of schemas) {
      expect(() => compile(schema), where).not.toThrow();
    }
  });

  it('gives every operation a unique operationId, a tag and a summary', () => {
    const document = createOpenApiDocument(plain) as any;
    const ids: string[] = [];
    for (const operations of Object.values<any>(document.paths)) {
      for (const op of Object.values<any>(operations)) {
        ids.push(op.operationId);
        expect(op.tags).toHaveLength(1);
        expect(op.summary).toBeTruthy();
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes bearer auth, 401, 429 and 504 on /v1 only when the server has them', () => {
    const off = createOpenApiDocument(plain) as any;
    const on = createOpenApiDocument(everything) as any;

    expect(off.components.securitySchemes).toBeUndefined();
    expect(off.paths['/v1/memories'].post.security).toBeUndefined();
    expect(Object.keys(off.paths['/v1/memories'].post.responses)).not.toContain('401');
    expect(Object.keys(off.paths['/v1/memories'].post.responses)).not.toContain('429');

    expect(on.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(on.paths['/v1/memories'].post.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(on.paths['/v1/memories'].post.responses)).toEqual(expect.arrayContaining(['401', '429', '504']));
    expect(on.paths['/v1/memories'].post.responses['429'].headers['Retry-After']).toBeDefined();
    // Probes and the documentation stay open, and the chat is never cut by the request timeout.
    expect(on.paths['/healthz'].get.security).toBeUndefined();
    expect(on.paths['/openapi.json'].get.security).toBeUndefined();
    expect(on.paths['/v1/chat'].post.responses['504'].content['application/json'].schema.properties.error.properties.code.enum).toEqual(['llm_timeout']);
  });

  it("merges a route's own errors with the common ones of the same status", () => {
    const chat429 = (createOpenApiDocument(everything) as any).paths['/v1/chat'].post.responses['429'];
    expect(chat429.content['application/json'].schema.properties.error.properties.code.enum).toEqual(['rate_limited', 'llm_rate_limited']);
    expect(chat429.headers['Retry-After']).toBeDefined();
  });

  it('follows the configured limits: topK up to MAX_TOP_K', () => {
    const document = createOpenApiDocument({ ...plain, maxTopK: 7 }) as any;
    const { requestBody } = documentValidator(document);
    expect(requestBody('POST', '/v1/search')({ query: 'tea', topK: 7 })).toBe(true);
    expect(requestBody('POST', '/v1/search')({ query: 'tea', topK: 8 })).toBe(false);
    expect(requestBody('POST', '/v1/memories/search')({ query: 'tea', topK: 8 })).toBe(false);
    expect(requestBody('POST', '/v1/chat')({ message: 'hi', topK: 8 })).toBe(false);
    expect(requestBody('POST', '/v1/turns/search')({ query: 'tea', topK: 7 })).toBe(true);
    expect(requestBody('POST', '/v1/turns/search')({ query: 'tea', topK: 8 })).toBe(false);
  });

  it('shows query parameters as the values they hold once parsed, optional where a default applies', () => {
    const list = (createOpenApiDocument(plain) as any).paths['/v1/memories'].get.parameters;
    const limit = list.find((p: any) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } });
    expect(list.find((p: any) => p.name === 'tagsAny')).toMatchObject({ style: 'form', explode: true, schema: { type: 'array' } });
  });

  it('turns Hono path patterns into OpenAPI templates', () => {
    expect(toOpenApiPath('/v1/memories/:key')).toBe('/v1/memories/{key}');
    expect(toOpenApiPath('/v1/documents/:id/chunks')).toBe('/v1/documents/{id}/chunks');
    expect(toOpenApiPath('/x/:n{[0-9]+}/y')).toBe('/x/{n}/y');
    expect(toOpenApiPath('/healthz')).toBe('/healthz');
  });
});
