import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppContext } from '../../app-context.js';
import type { BlockScope } from '../../blocks/block-types.js';
import { BlockConflictError, BlockNotFoundError, BlockWriteError } from '../../blocks/block-types.js';
import { HttpError, notFound, validationError } from '../../api/errors.js';
import {
  blockHistoryParams,
  blockHistoryQuery,
  blockHistorySchema,
  blockLabelParams,
  blockListSchema,
  blockReplySchema,
  blockScopeQuery,
  getBlockQuery,
  putBlockBody,
} from '../../api/schemas/block-schemas.js';
import type { ApiEnv } from '../api-env.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, jsonBody, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody, parseQuery, parseWith } from '../validate.js';

const scopeOf = (q: { agentId?: string | undefined; userId?: string | undefined }): BlockScope => ({ agentId: q.agentId ?? null, userId: q.userId ?? null });

/** A refused write as the API says it: a 400 naming the field, and nothing written. */
async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BlockWriteError) throw validationError([{ path: error.field, message: error.message }], 'body');
    if (error instanceof BlockNotFoundError) throw notFound(error.message);
    if (error instanceof BlockConflictError) throw new HttpError(409, 'block_write_conflict', error.message);
    throw error;
  }
}

const SCOPES =
  "A block is `(agentId, userId)`-scoped: an agent's (no user) is seen by all its users, a user's (no agent) by every agent, " +
  "and `(agentId, userId)` is that agent's own view of that user. Each turn's system prompt carries the blocks of its agent and user.";

/** `/v1/blocks`: working memory, labelled blocks pinned in every turn's prompt. */
export function createBlockRoutes(ctx: AppContext): ApiRoutes {
  const blocksOf = (c: Context<ApiEnv>) => ctx.blocks.forTenant(tenantOf(c));
  const labelOf = (c: Context<ApiEnv>) => parseWith(blockLabelParams, { label: c.req.param('label') }, 'path').label;
  const routes = createApiRoutes();
  const blockNotFound = notFoundResponse('block in this scope');

  const putRoute = createRoute({
    method: 'put',
    path: '/{label}',
    operationId: 'putBlock',
    tags: [TAGS.blocks],
    summary: 'Create or replace a working-memory block',
    description:
      `${SCOPES} The body replaces the block whole (unset fields take their defaults: limit 2000, not read-only, no schema). ` +
      'A value over its limit, a `schema` that is not a JSON Schema, a value that does not satisfy it, or an `agentId` that names ' +
      "no agent of the tenant is a 4xx naming the field. Recorded in the block's history.",
    request: { params: blockLabelParams, body: jsonBody(putBlockBody) },
    responses: {
      200: jsonReply('The block as replaced.', blockReplySchema),
      201: jsonReply('The block as created.', blockReplySchema),
      404: errorResponse({ codes: ['not_found'], description: '`agentId` names no agent of the tenant.' }),
    },
  });
  defineRoute(routes, putRoute, async (c) => {
    const label = labelOf(c);
    const { agentId, userId, ...input } = await parseBody(c, putBlockBody);
    // A block of neither would be in no turn's prompt.
    if (agentId === undefined && userId === undefined) throw validationError([{ path: 'agentId', message: 'agentId or userId (or both) is required' }], 'body');
    // The tenant's wall: a block is written for one of its own agents only.
    if (agentId !== undefined && !(await ctx.agents.forTenant(tenantOf(c)).get(agentId))) {
      throw new HttpError(404, 'not_found', `agentId: no agent with id ${JSON.stringify(agentId)}`, [{ path: 'agentId', message: 'names no agent' }]);
    }
    const { block, created } = await refusing(() => blocksOf(c).put(label, scopeOf({ agentId, userId }), input, { type: 'api' }));
    return c.json({ block, created }, created ? 201 : 200);
  });

  const listRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listBlocks',
    tags: [TAGS.blocks],
    summary: 'List the blocks of one scope, by label',
    request: { query: blockScopeQuery },
    responses: { 200: jsonReply('The blocks.', blockListSchema) },
  });
  defineRoute(routes, listRoute, async (c) => {
    const scope = scopeOf(parseQuery(c, blockScopeQuery));
    return c.json({ blocks: await blocksOf(c).list(scope) });
  });

  const getRoute = createRoute({
    method: 'get',
    path: '/{label}',
    operationId: 'getBlock',
    tags: [TAGS.blocks],
    summary: 'Read a block, now or as of a moment',
    request: { params: blockLabelParams, query: getBlockQuery },
    responses: { 200: jsonReply('The block.', blockReplySchema), 404: blockNotFound },
  });
  defineRoute(routes, getRoute, async (c) => {
    const label = labelOf(c);
    const { asOf, ...scope } = parseQuery(c, getBlockQuery);
    const block = await blocksOf(c).get(label, scopeOf(scope), asOf === undefined ? undefined : new Date(asOf));
    if (!block) throw notFound(`No block '${label}' in this scope${asOf ? ' at that moment' : ''}`);
    return c.json({ block });
  });

  const deleteRoute = createRoute({
    method: 'delete',
    path: '/{label}',
    operationId: 'deleteBlock',
    tags: [TAGS.blocks],
    summary: 'Delete a block (its history stays)',
    request: { params: blockLabelParams, query: blockScopeQuery },
    responses: { 204: { description: 'Deleted.' }, 404: blockNotFound },
  });
  defineRoute(routes, deleteRoute, async (c) => {
    const label = labelOf(c);
    const scope = scopeOf(parseQuery(c, blockScopeQuery));
    if (!(await blocksOf(c).delete(label, scope, { type: 'api' }))) throw notFound(`No block '${label}' in this scope`);
    return c.body(null, 204);
  });

  const historyRoute = createRoute({
    method: 'get',
    path: '/{label}/history',
    operationId: 'getBlockHistory',
    tags: [TAGS.blocks],
    summary: "A block's history, a page at a time",
    description:
      'Every value with who wrote it (the API, the model in a run with its tool, a template, an import) and when; kept after a delete. ' +
      'A page is the newest `limit` events (older than `before`), oldest first; `nextBefore` asks for the page before it.',
    request: { params: blockLabelParams, query: blockHistoryQuery },
    responses: { 200: jsonReply('The events.', blockHistorySchema) },
  });
  defineRoute(routes, historyRoute, async (c) => {
    const label = labelOf(c);
    const { limit, before, ...scope } = parseQuery(c, blockHistoryQuery);
    return c.json(await blocksOf(c).history(label, scopeOf(scope), { limit, before }));
  });

  const approveRoute = createRoute({
    method: 'post',
    path: '/{label}/history/{eventId}/approve',
    operationId: 'approveBlockWrite',
    tags: [TAGS.blocks],
    summary: 'Apply a model write the memory firewall held',
    description:
      "The held write's edit (its tool and arguments) made again to the block as it is now, so that writes since are kept; " +
      'a 409 saying why when it no longer applies (a replaced text that is gone, the limit or the schema), and nothing changes.',
    request: { params: blockHistoryParams, query: blockScopeQuery },
    responses: {
      200: jsonReply('The block as changed.', blockReplySchema),
      404: notFoundResponse('quarantined write of this block'),
      409: errorResponse({ codes: ['block_write_conflict'], description: "The held write's edit no longer applies to the block; it is unchanged." }),
    },
  });
  defineRoute(routes, approveRoute, async (c) => {
    const { label, eventId } = parseWith(blockHistoryParams, { label: c.req.param('label'), eventId: c.req.param('eventId') }, 'path');
    const scope = scopeOf(parseQuery(c, blockScopeQuery));
    const block = await refusing(() => blocksOf(c).approve(label, eventId, scope));
    return c.json({ block });
  });

  return routes;
}
