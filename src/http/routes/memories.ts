import { randomUUID } from 'node:crypto';
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import type { SaveMemoryResult } from '../../memory/memory-types.js';
import type { ApiEnv } from '../api-env.js';
import { notFound, validationError } from '../errors.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { header, jsonBody, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import {
  deleteByTagsReplySchema,
  memoryPageSchema,
  memoryReplySchema,
  memorySearchReplySchema,
  saveMemoryReplySchema,
} from '../schemas/memory-reply-schemas.js';
import {
  TAG_LIST_PARAMS,
  agentIdQuery,
  deleteByTagsInput,
  keyParams,
  listMemoriesQuery,
  putMemoryBody,
  saveMemoryBody,
  searchMemoriesBody,
} from '../schemas/memory-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody, parseQuery, parseWith, queryObject, readJsonBody } from '../validate.js';

/** `/v1/memories`: save, read, list, search and delete the memories of the request's tenant. */
export function createMemoryRoutes(ctx: AppContext): ApiRoutes {
  const memoriesOf = (c: Context<ApiEnv>) => ctx.memories.forTenant(tenantOf(c));
  const searchBody = searchMemoriesBody(ctx.config.MAX_TOP_K);
  const saved = {
    200: jsonReply('An existing memory was replaced.', saveMemoryReplySchema),
    201: jsonReply('A new memory.', saveMemoryReplySchema, z.object({ Location: header('The new memory: `/v1/memories/{key}?agentId={agentId}`.') })),
  };
  const routes = createApiRoutes();

  // `search` is a route, not a key: memories keyed `search` are reached with PUT/GET/DELETE only.
  const searchMemoriesRoute = createRoute({
    method: 'post',
    path: '/search',
    operationId: 'searchMemories',
    tags: [TAGS.memories],
    summary: 'Search memories (hybrid, vector or BM25)',
    description:
      'Hybrid by default: vector and BM25 candidates, filtered by agent and tags in SQL, fused by weighted reciprocal rank ' +
      'fusion. `minScore` is a cosine threshold on the vector side (refused in text mode). The agent id may come in the body ' +
      'or the query string, not both with different values.',
    request: { query: agentIdQuery, body: jsonBody(searchBody) },
    responses: { 200: jsonReply('The best `topK` memories, best first.', memorySearchReplySchema) },
  });
  defineRoute(routes, searchMemoriesRoute, async (c) => {
    const agentId = queryAgentId(c);
    const { query, ...options } = await parseBody(c, searchBody);
    const hits = await memoriesOf(c).search(query, { ...options, agentId: oneAgentId(options.agentId, agentId) });
    return c.json({ hits });
  });

  const saveMemoryRoute = createRoute({
    method: 'post',
    path: '/',
    operationId: 'saveMemory',
    tags: [TAGS.memories],
    summary: 'Save a memory (upsert by agent and key)',
    description:
      'Replaces the content, tags and metadata of an existing key (fields left out are cleared); without `key`, a new UUID ' +
      'is the key. The vector is recomputed only when the content changed.',
    request: { query: agentIdQuery, body: jsonBody(saveMemoryBody) },
    responses: saved,
  });
  defineRoute(routes, saveMemoryRoute, async (c) => {
    const agentId = queryAgentId(c);
    const body = await parseBody(c, saveMemoryBody);
    const result = await memoriesOf(c).save({ ...body, key: body.key ?? randomUUID(), agentId: oneAgentId(body.agentId, agentId) });
    return replySaved(c, result);
  });

  const putMemoryRoute = createRoute({
    method: 'put',
    path: '/{key}',
    operationId: 'putMemory',
    tags: [TAGS.memories],
    summary: 'Save a memory under a key',
    description: 'As `POST /v1/memories`, with the key in the path.',
    request: { params: keyParams, query: agentIdQuery, body: jsonBody(putMemoryBody) },
    responses: saved,
  });
  defineRoute(routes, putMemoryRoute, async (c) => {
    const { key } = keyOf(c);
    const agentId = queryAgentId(c);
    const body = await parseBody(c, putMemoryBody);
    const result = await memoriesOf(c).save({ ...body, key, agentId: oneAgentId(body.agentId, agentId) });
    return replySaved(c, result);
  });

  const getMemoryRoute = createRoute({
    method: 'get',
    path: '/{key}',
    operationId: 'getMemory',
    tags: [TAGS.memories],
    summary: 'Read a memory',
    request: { params: keyParams, query: agentIdQuery },
    responses: { 200: jsonReply('The memory.', memoryReplySchema), 404: notFoundResponse('memory for this agent') },
  });
  defineRoute(routes, getMemoryRoute, async (c) => {
    const { key } = keyOf(c);
    const agentId = queryAgentId(c);
    const memory = await memoriesOf(c).get(key, agentId);
    if (!memory) throw memoryNotFound(key, agentId);
    return c.json({ memory });
  });

  const deleteMemoryRoute = createRoute({
    method: 'delete',
    path: '/{key}',
    operationId: 'deleteMemory',
    tags: [TAGS.memories],
    summary: 'Delete a memory',
    request: { params: keyParams, query: agentIdQuery },
    responses: { 204: { description: 'Deleted.' }, 404: notFoundResponse('memory for this agent') },
  });
  defineRoute(routes, deleteMemoryRoute, async (c) => {
    const { key } = keyOf(c);
    const agentId = queryAgentId(c);
    if (!(await memoriesOf(c).delete(key, agentId))) throw memoryNotFound(key, agentId);
    return c.body(null, 204);
  });

  const listMemoriesRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listMemories',
    tags: [TAGS.memories],
    summary: 'List memories (tag filters, cursor pagination)',
    request: { query: listMemoriesQuery },
    responses: { 200: jsonReply('One page, newest first.', memoryPageSchema) },
  });
  defineRoute(routes, listMemoriesRoute, async (c) => {
    const options = parseQuery(c, listMemoriesQuery, { lists: TAG_LIST_PARAMS });
    return c.json(await memoriesOf(c).list(options));
  });

  // The filter comes in the body or the query string: some clients cannot send a DELETE body.
  const deleteMemoriesByTagsRoute = createRoute({
    method: 'delete',
    path: '/',
    operationId: 'deleteMemoriesByTags',
    tags: [TAGS.memories],
    summary: 'Delete every memory with given tags',
    description:
      'The filter comes in the query string or in a JSON body (same fields), not both. `tagsAny` or `tagsAll` must name a ' +
      'tag: `tagsNone` alone would delete almost everything.',
    request: { query: deleteByTagsInput, body: jsonBody(deleteByTagsInput, false) },
    responses: { 200: jsonReply('How many were deleted.', deleteByTagsReplySchema) },
  });
  defineRoute(routes, deleteMemoriesByTagsRoute, async (c) => {
    const body = await readJsonBody(c);
    const query = queryObject(c, { lists: TAG_LIST_PARAMS });
    if (body !== undefined && Object.keys(query).length > 0) {
      throw validationError([{ path: '', message: 'give the filter in the body or in the query string, not both' }]);
    }
    const filter = body === undefined ? parseWith(deleteByTagsInput, query, 'query') : parseWith(deleteByTagsInput, body, 'body');
    return c.json({ deleted: await memoriesOf(c).deleteByTags(filter) });
  });

  return routes;
}

function keyOf(c: Context): { key: string } {
  return parseWith(keyParams, { key: c.req.param('key') }, 'path');
}

function queryAgentId(c: Context): string | undefined {
  return parseQuery(c, agentIdQuery).agentId;
}

/** Body routes take the agent id in either place; two different ones are a client bug, not a choice to make. */
function oneAgentId(fromBody: string | undefined, fromQuery: string | undefined): string | undefined {
  if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery) {
    throw validationError([{ path: 'agentId', message: 'the body and the query string name different agents' }]);
  }
  return fromBody ?? fromQuery;
}

function memoryNotFound(key: string, agentId: string | undefined) {
  return notFound(`No memory with key ${JSON.stringify(key)}${agentId ? ` for agent ${JSON.stringify(agentId)}` : ''}`);
}

function replySaved(c: Context, result: SaveMemoryResult) {
  if (!result.created) return c.json(result, 200);
  const { key, agentId } = result.memory;
  c.header('Location', `/v1/memories/${encodeURIComponent(key)}?agentId=${encodeURIComponent(agentId)}`);
  return c.json(result, 201);
}
