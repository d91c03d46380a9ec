import { randomUUID } from 'node:crypto';
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { recordAudit } from '../audit-record.js';
import { DEFAULT_AGENT_ID, type MemoryScope, type SaveMemoryResult } from '../../memory/memory-types.js';
import type { ApiEnv } from '../api-env.js';
import { HttpError, notFound, validationError } from '../../api/errors.js';
import { memoryDeletedEntry } from '../../api/memory-audit-entries.js';
import { describeScope, memoryNotFound, missingMemoryError } from '../../api/memory-not-found.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, header, jsonBody, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import {
  batchMemoriesReplySchema,
  deleteByTagsReplySchema,
  memoryHistoryReplySchema,
  memoryPageSchema,
  memoryReplySchema,
  memorySearchReplySchema,
  saveMemoryReplySchema,
} from '../../api/schemas/memory-reply-schemas.js';
import {
  TAG_LIST_PARAMS,
  agentIdQuery,
  batchMemoriesBody,
  deleteByTagsInput,
  getMemoryQuery,
  keyParams,
  listMemoriesQuery,
  patchMemoryBody,
  putMemoryBody,
  saveMemoryBody,
  searchMemoriesBody,
} from '../../api/schemas/memory-schemas.js';
import { metadataFilterFromQuery } from '../../api/schemas/metadata-filter-schema.js';
import { readMoment } from '../../api/schemas/valid-time-schema.js';
import { readTimeWindow } from '../../text/time-window.js';
import { withEngineWeights } from '../../retrieval/fusion-weights.js';
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
      'fusion. `minScore` is a cosine threshold on the vector side (refused in text mode). `userId` narrows to one user ' +
      "(with `includeShared`, the agent's shared memories too); without it, every user's memories are searched. `metadata` filters on top-level metadata keys in SQL " +
      '(`{"project":"apollo","priority":{"$gte":2}}`). Invalidated, quarantined and expired memories are left out (`includeInvalid` ' +
      'brings the invalidated back, `includeQuarantined` the quarantined). The agent and user ids may come in the body or the query string, not both with different values.',
    request: { query: agentIdQuery, body: jsonBody(searchBody) },
    responses: { 200: jsonReply('The best `topK` memories, best first.', memorySearchReplySchema) },
  });
  defineRoute(routes, searchMemoriesRoute, async (c) => {
    const scope = queryScope(c);
    const { query, ...options } = await parseBody(c, searchBody);
    // Read here once: the reply shows the window the search applied.
    const timeWindow = readTimeWindow(query, options.asOf ?? new Date());
    const hits = await memoriesOf(c).search(query, { ...withEngineWeights(options), ...oneScope(options, scope), timeWindow });
    return c.json({ hits, timeWindow });
  });

  const saveMemoryRoute = createRoute({
    method: 'post',
    path: '/',
    operationId: 'saveMemory',
    tags: [TAGS.memories],
    summary: 'Save a memory (upsert by agent, user and key)',
    description:
      'Replaces the content, tags, metadata and expiry of an existing key (fields left out are cleared; an invalidated ' +
      "memory is valid again); without `key`, a new UUID is the key. `userId` makes it that user's memory; without it, " +
      "it is the agent's shared one. `ttlSeconds` or `expiresAt` make it expire. The vector is recomputed only when the content changed.",
    request: { query: agentIdQuery, body: jsonBody(saveMemoryBody) },
    responses: saved,
  });
  defineRoute(routes, saveMemoryRoute, async (c) => {
    const scope = queryScope(c);
    const body = await parseBody(c, saveMemoryBody);
    const result = await memoriesOf(c).save({ ...body, key: body.key ?? randomUUID(), ...oneScope(body, scope) });
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
    const scope = queryScope(c);
    const body = await parseBody(c, putMemoryBody);
    const result = await memoriesOf(c).save({ ...body, key, ...oneScope(body, scope) });
    return replySaved(c, result);
  });

  const patchMemoryRoute = createRoute({
    method: 'patch',
    path: '/{key}',
    operationId: 'patchMemory',
    tags: [TAGS.memories],
    summary: 'Change some fields of a memory',
    description:
      'Only the fields given change: `tags` replaces the tags, `addTags`/`removeTags` edit them; `ttlSeconds` or `expiresAt` ' +
      'set the expiry, null clears it. The vector is recomputed only when the content changes. A change is recorded in ' +
      'the history; an invalidated memory that is changed is valid again.',
    request: { params: keyParams, query: agentIdQuery, body: jsonBody(patchMemoryBody) },
    responses: { 200: jsonReply('The memory as changed.', memoryReplySchema), 404: notFoundResponse('memory for this agent and user') },
  });
  defineRoute(routes, patchMemoryRoute, async (c) => {
    const { key } = keyOf(c);
    const scope = queryScope(c);
    const body = await parseBody(c, patchMemoryBody);
    const memory = await memoriesOf(c).patch(key, scope, body);
    if (!memory) throw memoryNotFound(key, scope);
    return c.json({ memory });
  });

  const batchMemoriesRoute = createRoute({
    method: 'post',
    path: '/batch',
    operationId: 'saveMemoriesBatch',
    tags: [TAGS.memories],
    summary: 'Save up to 100 memories in one transaction',
    description:
      'Each item is a `POST /v1/memories` body. All are saved or none: one invalid item refuses the batch, naming its ' +
      'index (`memories.3.content`). The agent and user ids of the query string apply to items that name none.',
    request: { query: agentIdQuery, body: jsonBody(batchMemoriesBody) },
    responses: { 200: jsonReply("Each item's result, in order.", batchMemoriesReplySchema) },
  });
  defineRoute(routes, batchMemoriesRoute, async (c) => {
    const scope = queryScope(c);
    const { memories } = await parseBody(c, batchMemoriesBody);
    const inputs = memories.map((m, i) => ({ ...m, key: m.key ?? randomUUID(), ...oneScope(m, scope, `memories.${i}.`) }));
    const seen = new Map<string, number>();
    for (const [i, m] of inputs.entries()) {
      const id = JSON.stringify([m.agentId ?? null, m.userId ?? null, m.key]);
      const first = seen.get(id);
      if (first !== undefined) throw validationError([{ path: `memories.${i}.key`, message: `repeats the key of memories.${first}` }], 'body');
      seen.set(id, i);
    }
    return c.json({ results: await memoriesOf(c).saveMany(inputs) });
  });

  const memoryHistoryRoute = createRoute({
    method: 'get',
    path: '/{key}/history',
    operationId: 'getMemoryHistory',
    tags: [TAGS.memories],
    summary: "A memory's history",
    description:
      'Every change of the key in the scope, oldest first: created, updated, invalidated, deleted, expired, with the content ' +
      "before and after, the tags, the time and who made it (the API, the chat model's tool, or fact extraction with its " +
      'conversation and turn). Kept after the memory is deleted.',
    request: { params: keyParams, query: agentIdQuery },
    responses: { 200: jsonReply('The events, oldest first.', memoryHistoryReplySchema), 404: notFoundResponse('history for this key') },
  });
  defineRoute(routes, memoryHistoryRoute, async (c) => {
    const { key } = keyOf(c);
    const scope = queryScope(c);
    const events = await memoriesOf(c).history(key, scope);
    if (events.length === 0) throw notFound(`No memory with key ${JSON.stringify(key)} has ever existed${describeScope(scope)}`);
    return c.json({ events });
  });

  const getMemoryRoute = createRoute({
    method: 'get',
    path: '/{key}',
    operationId: 'getMemory',
    tags: [TAGS.memories],
    summary: 'Read a memory',
    description:
      'An expired memory is gone (404); an invalidated one is returned, with its `validTo`. `asOf`: the memory as it was ' +
      'then, from its history (404 when it did not exist yet or was gone). `validAt` (default now): 404 when its fact did not hold then.',
    request: { params: keyParams, query: getMemoryQuery },
    responses: { 200: jsonReply('The memory.', memoryReplySchema), 404: notFoundResponse('memory for this agent and user') },
  });
  defineRoute(routes, getMemoryRoute, async (c) => {
    const { key } = keyOf(c);
    const { asOf, validAt, ...scope } = readMoment(parseQuery(c, getMemoryQuery));
    const memory = await memoriesOf(c).get(key, scope, { ...(asOf ? { asOf } : {}), ...(validAt ? { validAt } : {}) });
    if (!memory) throw await missingMemoryError(memoriesOf(c), key, scope, { ...(asOf ? { asOf } : {}), ...(validAt ? { validAt } : {}) });
    return c.json({ memory });
  });

  const approveMemoryRoute = createRoute({
    method: 'post',
    path: '/{key}/approve',
    operationId: 'approveMemory',
    tags: [TAGS.memories],
    summary: 'Release a quarantined memory',
    description:
      'A memory the firewall quarantined (its content read as an instruction to an assistant) becomes active: recalled, ' +
      'searched and listed again. Recorded in its history as an `approved` event. `DELETE` removes it instead.',
    request: { params: keyParams, query: agentIdQuery },
    responses: {
      200: jsonReply('The memory, active.', memoryReplySchema),
      404: notFoundResponse('memory for this agent and user'),
      409: errorResponse({ codes: ['memory_not_quarantined'], description: 'The memory is not quarantined.' }),
    },
  });
  defineRoute(routes, approveMemoryRoute, async (c) => {
    const { key } = keyOf(c);
    const scope = queryScope(c);
    const result = await memoriesOf(c).approve(key, scope);
    if ('error' in result) {
      if (result.error === 'not_found') throw memoryNotFound(key, scope);
      throw new HttpError(409, 'memory_not_quarantined', `The memory with key ${JSON.stringify(key)}${describeScope(scope)} is not quarantined`);
    }
    return c.json(result, 200);
  });

  const deleteMemoryRoute = createRoute({
    method: 'delete',
    path: '/{key}',
    operationId: 'deleteMemory',
    tags: [TAGS.memories],
    summary: 'Delete a memory',
    request: { params: keyParams, query: agentIdQuery },
    responses: { 204: { description: 'Deleted.' }, 404: notFoundResponse('memory for this agent and user') },
  });
  defineRoute(routes, deleteMemoryRoute, async (c) => {
    const { key } = keyOf(c);
    const scope = queryScope(c);
    if (!(await memoriesOf(c).delete(key, scope))) throw memoryNotFound(key, scope);
    await recordAudit(ctx, c, memoryDeletedEntry(key, scope));
    return c.body(null, 204);
  });

  const listMemoriesRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listMemories',
    tags: [TAGS.memories],
    summary: 'List memories (tag and metadata filters, cursor pagination)',
    description:
      '`metadata` is a JSON filter on top-level metadata keys, e.g. `{"project":"apollo","priority":{"$gte":2}}` ' +
      '(operators `$eq $ne $in $nin $gt $gte $lt $lte $exists`, `$and`/`$or`). Invalidated memories are left out unless ' +
      '`includeInvalid=true`, quarantined ones unless `includeQuarantined=true` or `status=quarantined` (the review queue); expired ones always are. `asOf`: the memories as they were then, from their history. ' +
      '`validAt` (default now): only facts that held then. `userId` narrows to one user (with `includeShared`, the ' +
      "agent's shared memories too); without it, every user's memories are listed.",
    request: { query: listMemoriesQuery },
    responses: { 200: jsonReply('One page, newest first.', memoryPageSchema) },
  });
  defineRoute(routes, listMemoriesRoute, async (c) => {
    const { metadata, ...options } = readMoment(parseQuery(c, listMemoriesQuery, { lists: TAG_LIST_PARAMS }));
    return c.json(await memoriesOf(c).list({ ...options, ...(metadata === undefined ? {} : { metadata: metadataFilterFromQuery(metadata) }) }));
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
      "tag: `tagsNone` alone would delete almost everything. Without `userId`, every user's matching memories are deleted.",
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
    const deleted = await memoriesOf(c).deleteByTags(filter);
    // The tags stay out: a tag can say as much as the content it labels.
    await recordAudit(ctx, c, { action: 'memories.deleted', userId: filter.userId ?? null, details: { agentId: filter.agentId ?? DEFAULT_AGENT_ID, deleted } });
    return c.json({ deleted });
  });

  return routes;
}

function keyOf(c: Context): { key: string } {
  return parseWith(keyParams, { key: c.req.param('key') }, 'path');
}

function queryScope(c: Context): { agentId?: string; userId?: string } {
  return parseQuery(c, agentIdQuery);
}

/** Body routes take the agent and user ids in either place; two different ones are a client bug, not a choice to make. */
function oneScope(body: MemoryScope, query: MemoryScope, prefix = ''): { agentId?: string; userId?: string } {
  const scope: { agentId?: string; userId?: string } = {};
  for (const field of ['agentId', 'userId'] as const) {
    const fromBody = body[field] ?? undefined;
    const fromQuery = query[field] ?? undefined;
    if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery) {
      throw validationError([{ path: `${prefix}${field}`, message: 'the body and the query string name different ones' }]);
    }
    const value = fromBody ?? fromQuery;
    if (value !== undefined) scope[field] = value;
  }
  return scope;
}

function replySaved(c: Context, result: SaveMemoryResult) {
  if (!result.created) return c.json(result, 200);
  const { key, agentId, userId } = result.memory;
  const user = userId === null ? '' : `&userId=${encodeURIComponent(userId)}`;
  c.header('Location', `/v1/memories/${encodeURIComponent(key)}?agentId=${encodeURIComponent(agentId)}${user}`);
  return c.json(result, 201);
}
