import { randomUUID } from 'node:crypto';
import { type Context, Hono } from 'hono';
import type { AppContext } from '../../app-context.js';
import type { SaveMemoryResult } from '../../memory/memory-types.js';
import { notFound, validationError } from '../errors.js';
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
export function createMemoryRoutes(ctx: AppContext): Hono {
  const memoriesOf = (c: Context) => ctx.memories.forTenant(tenantOf(c));
  const searchBody = searchMemoriesBody(ctx.config.MAX_TOP_K);
  const routes = new Hono();

  // `search` is a route, not a key: memories keyed `search` are reached with PUT/GET/DELETE only.
  routes.post('/search', async (c) => {
    const agentId = queryAgentId(c);
    const { query, ...options } = await parseBody(c, searchBody);
    const hits = await memoriesOf(c).search(query, { ...options, agentId: oneAgentId(options.agentId, agentId) });
    return c.json({ hits });
  });

  routes.post('/', async (c) => {
    const agentId = queryAgentId(c);
    const body = await parseBody(c, saveMemoryBody);
    const result = await memoriesOf(c).save({ ...body, key: body.key ?? randomUUID(), agentId: oneAgentId(body.agentId, agentId) });
    return replySaved(c, result);
  });

  routes.put('/:key', async (c) => {
    const { key } = keyOf(c);
    const agentId = queryAgentId(c);
    const body = await parseBody(c, putMemoryBody);
    const result = await memoriesOf(c).save({ ...body, key, agentId: oneAgentId(body.agentId, agentId) });
    return replySaved(c, result);
  });

  routes.get('/:key', async (c) => {
    const { key } = keyOf(c);
    const agentId = queryAgentId(c);
    const memory = await memoriesOf(c).get(key, agentId);
    if (!memory) throw memoryNotFound(key, agentId);
    return c.json({ memory });
  });

  routes.delete('/:key', async (c) => {
    const { key } = keyOf(c);
    const agentId = queryAgentId(c);
    if (!(await memoriesOf(c).delete(key, agentId))) throw memoryNotFound(key, agentId);
    return c.body(null, 204);
  });

  routes.get('/', async (c) => {
    const options = parseQuery(c, listMemoriesQuery, { lists: TAG_LIST_PARAMS });
    return c.json(await memoriesOf(c).list(options));
  });

  // The filter comes in the body or the query string: some clients cannot send a DELETE body.
  routes.delete('/', async (c) => {
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
