import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import { DEFAULT_AGENT_ID } from '../../memory/memory-types.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { jsonBody, jsonReply } from '../openapi/route-responses.js';
import { turnSearchReplySchema } from '../../api/schemas/turn-reply-schemas.js';
import { searchTurnsBody } from '../../api/schemas/turn-schemas.js';
import { withEngineWeights } from '../../retrieval/fusion-weights.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody } from '../validate.js';

/** `/v1/turns`: past turns of the tenant's stored conversations (episodic recall). */
export function createTurnRoutes(ctx: AppContext): ApiRoutes {
  const body = searchTurnsBody(ctx.config.MAX_TOP_K);
  const routes = createApiRoutes();

  const searchTurnsRoute = createRoute({
    method: 'post',
    path: '/search',
    operationId: 'searchTurns',
    tags: [TAGS.turns],
    summary: "Search past turns of an agent's conversations (hybrid, vector or BM25)",
    description:
      "Each stored turn (the user's question and the agent's final answer) is indexed after the reply, and an imported " +
      "conversation's turns at import: embedded with its date in words and the message before it, and indexed for BM25 " +
      'with the next question too. Filtered in SQL by agent (default `default`), user, and conversation (`conversationId`, or ' +
      '`excludeConversationId` for every other one), and by time (`asOf`). Modes and scores as for memories; a time the query ' +
      'names favours the turns said then, and no conversation fills the list alone. In hybrid mode the turns past the first four ' +
      'follow how their conversations score too (`groupBy: "conversation"` ranks conversations).',
    request: { body: jsonBody(body) },
    responses: { 200: jsonReply('The best `topK` turns, best first.', turnSearchReplySchema) },
  });
  defineRoute(routes, searchTurnsRoute, async (c) => {
    const { query, agentId, groupBy, ...options } = await parseBody(c, body);
    const search = ctx.turns.forTenant(tenantOf(c));
    const scope = { ...withEngineWeights(options), agentId: agentId ?? DEFAULT_AGENT_ID, signal: c.req.raw.signal };
    const result = groupBy === 'conversation' ? await search.searchConversations(query, scope) : await search.search(query, scope);
    return c.json(result);
  });

  return routes;
}
