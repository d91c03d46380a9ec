import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { jsonBody, jsonReply } from '../openapi/route-responses.js';
import { searchReplySchema } from '../../api/schemas/document-reply-schemas.js';
import { searchBody } from '../../api/schemas/document-schemas.js';
import { withEngineWeights } from '../../retrieval/fusion-weights.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody } from '../validate.js';

/** `POST /v1/search`: hybrid, vector or BM25 retrieval over the tenant's document chunks, with citation fields. */
export function createSearchRoutes(ctx: AppContext): ApiRoutes {
  const { rerankers } = ctx.search;
  const body = searchBody(ctx.config.MAX_TOP_K, rerankers);
  const routes = createApiRoutes();
  const searchKnowledgeRoute = createRoute({
    method: 'post',
    path: '/',
    operationId: 'searchKnowledge',
    tags: [TAGS.search],
    summary: 'Search document chunks (hybrid, vector or BM25; optional rerank)',
    description:
      "Each retriever returns `candidateK` candidates, filtered by tags in SQL: BM25 scores passages (runs of a document's " +
      'chunks), the vector side chunks, which count for their passage at its nearest chunk. Hybrid mode fuses passages by ' +
      'weighted reciprocal rank fusion. Each hit is one passage, citing its chunk that covers most of the query (vector ' +
      'mode: its nearest). A `reranker` reorders the first `candidateK` and returns the best `topK` with `rerankScore`; without ' +
      `one, RERANKER_DEFAULT applies. Rerankers on this server: ${rerankers.join(', ')}.`,
    request: { body: jsonBody(body) },
    responses: { 200: jsonReply('The best `topK` passages, best first, each as the chunk it cites, with citation fields.', searchReplySchema) },
  });
  defineRoute(routes, searchKnowledgeRoute, async (c) => {
    const { query, ...options } = await parseBody(c, body);
    const hits = await ctx.search.forTenant(tenantOf(c)).search(query, { ...withEngineWeights(options), signal: c.req.raw.signal });
    return c.json({ hits });
  });
  return routes;
}
