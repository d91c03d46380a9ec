import { type Context, Hono } from 'hono';
import type { AppContext } from '../../app-context.js';
import { ConversationNotFoundError } from '../../conversations/conversation-types.js';
import { DEFAULT_AGENT_ID } from '../../memory/memory-types.js';
import {
  conversationAgentQuery,
  conversationIdParams,
  importConversationBody,
  listConversationsQuery,
} from '../schemas/conversation-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody, parseQuery, parseWith } from '../validate.js';

/** `/v1/conversations`: stored chat conversations of an agent (`?agentId=`, default `default`) of the request's tenant. */
export function createConversationRoutes(ctx: AppContext): Hono {
  const conversationsOf = (c: Context) => ctx.conversations.forTenant(tenantOf(c));
  const routes = new Hono();

  routes.get('/', async (c) => {
    const { agentId, limit, cursor } = parseQuery(c, listConversationsQuery);
    return c.json(await conversationsOf(c).list({ agentId: agentId ?? DEFAULT_AGENT_ID, limit, cursor }));
  });

  // Before `/:id`, which would otherwise take "import" for an id (and fail it as one).
  routes.post('/import', async (c) => {
    const { agentId } = parseQuery(c, conversationAgentQuery);
    const data = await parseBody(c, importConversationBody);
    const conversation = await conversationsOf(c).import(data, agentId ?? data.conversation.agentId);
    c.header('Location', `/v1/conversations/${conversation.id}?agentId=${encodeURIComponent(conversation.agentId)}`);
    return c.json({ conversation, importedFrom: data.conversation.id }, 201);
  });

  routes.get('/:id', async (c) => {
    const { id, agentId } = target(c);
    // With what the stored history costs in a prompt, as the chat's compaction would send it.
    const view = await ctx.chat.forTenant(tenantOf(c)).describeConversation(id, agentId);
    if (!view) throw new ConversationNotFoundError(id, agentId);
    return c.json(view);
  });

  routes.get('/:id/export', async (c) => {
    const { id, agentId } = target(c);
    const exported = await conversationsOf(c).export(id, agentId);
    if (!exported) throw new ConversationNotFoundError(id, agentId);
    c.header('Content-Disposition', `attachment; filename="conversation-${id}.json"`);
    return c.json(exported);
  });

  routes.delete('/:id', async (c) => {
    const { id, agentId } = target(c);
    if (!(await conversationsOf(c).delete(id, agentId))) throw new ConversationNotFoundError(id, agentId);
    return c.body(null, 204);
  });

  return routes;
}

function target(c: Context): { id: string; agentId: string } {
  const { id } = parseWith(conversationIdParams, { id: c.req.param('id') }, 'path');
  const { agentId } = parseQuery(c, conversationAgentQuery);
  return { id, agentId: agentId ?? DEFAULT_AGENT_ID };
}
