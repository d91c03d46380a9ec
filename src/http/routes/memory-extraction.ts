import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import { DEFAULT_AGENT_ID } from '../../memory/memory-types.js';
import { HttpError } from '../../api/errors.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, jsonBody, jsonReply } from '../openapi/route-responses.js';
import { extractMemoriesBody, extractMemoriesReplySchema } from '../../api/schemas/memory-extraction-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody } from '../validate.js';

/** `POST /v1/memories/extract`: fact extraction for apps that keep their own conversations. */
export function createMemoryExtractionRoutes(ctx: AppContext): ApiRoutes {
  const routes = createApiRoutes();
  const extractRoute = createRoute({
    method: 'post',
    path: '/extract',
    operationId: 'extractMemories',
    tags: [TAGS.memories],
    summary: 'Extract memories from messages with the LLM',
    description:
      'What the chat does after each turn: the model picks out facts about the user from the messages, is shown the closest ' +
      'live memories of the scope (agent and user), and decides per fact ADD, UPDATE (with history), INVALIDATE (kept with ' +
      '`validTo`, no longer recalled) or NONE. Decisions apply in one transaction; a fact the scope already holds is never ' +
      'added twice. Added memories are tagged `extracted`. Answers the decisions, each applied or skipped with a reason.',
    request: { body: jsonBody(extractMemoriesBody) },
    responses: {
      200: jsonReply('The decisions.', extractMemoriesReplySchema),
      503: errorResponse({ codes: ['llm_not_configured'], description: 'No LLM is configured: extraction needs one.' }),
    },
  });
  defineRoute(routes, extractRoute, async (c) => {
    const body = await parseBody(c, extractMemoriesBody);
    if (!ctx.extractors) throw new HttpError(503, 'llm_not_configured', 'Memory extraction needs an LLM: set LLM_BASE_URL and LLM_MODEL.');
    const result = await ctx.extractors.forTenant(tenantOf(c)).extract({
      messages: body.messages,
      scope: { agentId: body.agentId ?? DEFAULT_AGENT_ID, userId: body.userId },
      signal: c.req.raw.signal,
    });
    return c.json(result);
  });
  return routes;
}
