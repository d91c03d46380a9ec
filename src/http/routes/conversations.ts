import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { recordAudit } from '../audit-record.js';
import { ConversationNotFoundError } from '../../conversations/conversation-types.js';
import { DEFAULT_AGENT_ID } from '../../memory/memory-types.js';
import type { ApiEnv } from '../api-env.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, header, jsonBody, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import {
  conversationPageSchema,
  conversationReplySchema,
  importConversationReplySchema,
  recordTurnReplySchema,
} from '../../api/schemas/conversation-reply-schemas.js';
import {
  conversationAgentQuery,
  deleteConversationQuery,
  conversationIdParams,
  importConversationBody,
  importConversationQuery,
  listConversationsQuery,
  recordTurnBody,
} from '../../api/schemas/conversation-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { notFound } from '../../api/errors.js';
import { IMAGE_MEDIA_TYPES } from '../../llm/image-data.js';
import { idParam, parseBody, parseQuery, parseWith } from '../validate.js';

/** `/v1/conversations`: stored chat conversations of an agent (`?agentId=`, default `default`) of the request's tenant. */
export function createConversationRoutes(ctx: AppContext): ApiRoutes {
  const conversationsOf = (c: Context<ApiEnv>) => ctx.conversations.forTenant(tenantOf(c));
  const routes = createApiRoutes();

  const listConversationsRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listConversations',
    tags: [TAGS.conversations],
    summary: "List an agent's conversations, newest first",
    request: { query: listConversationsQuery },
    responses: { 200: jsonReply('One page.', conversationPageSchema) },
  });
  defineRoute(routes, listConversationsRoute, async (c) => {
    const { agentId, userId, limit, cursor } = parseQuery(c, listConversationsQuery);
    return c.json(await conversationsOf(c).list({ agentId: agentId ?? DEFAULT_AGENT_ID, userId, limit, cursor }));
  });

  // Before `/:id`, which would otherwise take "import" for an id (and fail it as one).
  const importConversationRoute = createRoute({
    method: 'post',
    path: '/import',
    operationId: 'importConversation',
    tags: [TAGS.conversations],
    summary: 'Import an exported conversation, under a new id',
    description:
      'The body is what `GET /v1/conversations/{id}/export` wrote. The history must be one a turn can continue: messages ' +
      'numbered 1, 2, 3…, turns that start with the user (the assistant may open the conversation with a turn of its own, ' +
      "which the user's first message ends), every tool call answered before the next message, and " +
      'checkpoints and summary that cover turns the conversation has. `?agentId=` and `?userId=` import for another agent or ' +
      "user than the export's. The turns are indexed for recall (`POST /v1/turns/search`, the chat) before the reply. " +
      'The upload size limit applies, not the body limit.',
    request: { query: importConversationQuery, body: jsonBody(importConversationBody) },
    responses: {
      201: jsonReply(
        'The imported conversation.',
        importConversationReplySchema,
        z.object({ Location: header('The new conversation: `/v1/conversations/{id}?agentId={agentId}`.') }),
      ),
    },
  });
  defineRoute(routes, importConversationRoute, async (c) => {
    const { agentId, userId } = parseQuery(c, importConversationQuery);
    const data = await parseBody(c, importConversationBody);
    const conversation = await conversationsOf(c).import(data, agentId ?? data.conversation.agentId, userId);
    c.header('Location', `/v1/conversations/${conversation.id}?agentId=${encodeURIComponent(conversation.agentId)}`);
    return c.json({ conversation, importedFrom: data.conversation.id }, 201);
  });

  const conversationNotFound = notFoundResponse('conversation for this agent');
  const getConversationRoute = createRoute({
    method: 'get',
    path: '/{id}',
    operationId: 'getConversation',
    tags: [TAGS.conversations],
    summary: 'Read a conversation: messages, checkpoints, summary and token estimate',
    request: { params: conversationIdParams, query: conversationAgentQuery },
    responses: { 200: jsonReply('The conversation.', conversationReplySchema), 404: conversationNotFound },
  });
  defineRoute(routes, getConversationRoute, async (c) => {
    const { id, agentId } = target(c);
    // With what the stored history costs in a prompt, as the chat's compaction would send it.
    const view = await ctx.chat.forTenant(tenantOf(c)).describeConversation(id, agentId);
    if (!view) throw new ConversationNotFoundError(id, agentId);
    return c.json(view);
  });

  const exportConversationRoute = createRoute({
    method: 'get',
    path: '/{id}/export',
    operationId: 'exportConversation',
    tags: [TAGS.conversations],
    summary: 'Export a conversation (the body `POST /v1/conversations/import` takes)',
    request: { params: conversationIdParams, query: conversationAgentQuery },
    responses: {
      200: jsonReply(
        'The export, as an attachment.',
        importConversationBody,
        z.object({ 'Content-Disposition': header('`attachment; filename="conversation-{id}.json"`') }),
      ),
      404: conversationNotFound,
    },
  });
  defineRoute(routes, exportConversationRoute, async (c) => {
    const { id, agentId } = target(c);
    const exported = await conversationsOf(c).export(id, agentId);
    if (!exported) throw new ConversationNotFoundError(id, agentId);
    c.header('Content-Disposition', `attachment; filename="conversation-${id}.json"`);
    return c.json(exported);
  });

  const recordTurnRoute = createRoute({
    method: 'post',
    path: '/{id}/turns',
    operationId: 'recordTurn',
    tags: [TAGS.conversations],
    summary: 'Store a turn the client ran with its own model',
    description:
      "The user's message and the model's reply are appended to the conversation as its next turn (the conversation is " +
      'created under that id when new), then handled as a chat turn is after its reply: indexed for recall ' +
      '(`POST /v1/turns/search`, the chat) and, when memory extraction is on, read for facts about the user. The message ' +
      "and the reply take the limits of the chat's message. A conversation of another agent or user is a 404; one with a " +
      'run waiting for the client, a 409.',
    request: { params: conversationIdParams, body: jsonBody(recordTurnBody) },
    responses: {
      201: jsonReply('The stored turn: its conversation and its number there.', recordTurnReplySchema),
      404: notFoundResponse('conversation for this agent and user: the id belongs to another agent, or another user'),
      409: errorResponse({ codes: ['run_waiting'], description: 'The conversation has a run waiting for the client: answer or cancel it first.' }),
    },
  });
  defineRoute(routes, recordTurnRoute, async (c) => {
    const { id } = idParam(c, conversationIdParams);
    const { agentId = DEFAULT_AGENT_ID, userId, user, assistant } = await parseBody(c, recordTurnBody);
    const chat = ctx.chat.forTenant(tenantOf(c));
    await chat.assertCanContinue(id, agentId, userId);
    const recorded = await chat.recordTurn({ conversationId: id, agentId, userId, user, assistant, signal: c.req.raw.signal });
    return c.json(recorded, 201);
  });

  const deleteConversationRoute = createRoute({
    method: 'delete',
    path: '/{id}',
    operationId: 'deleteConversation',
    tags: [TAGS.conversations],
    summary: 'Delete a conversation',
    description:
      'With its messages, turns and summaries. Memories drawn from it stay, their sources in it marked `deleted`; with ' +
      '`cascade=memories`, those drawn from it alone are deleted (a memory with sources elsewhere keeps them). A call cut ' +
      'short can be repeated: the memories are settled first, then the conversation goes.',
    request: { params: conversationIdParams, query: deleteConversationQuery },
    responses: { 204: { description: 'Deleted.' }, 404: conversationNotFound },
  });
  defineRoute(routes, deleteConversationRoute, async (c) => {
    const { id } = idParam(c, conversationIdParams);
    const { agentId = DEFAULT_AGENT_ID, cascade } = parseQuery(c, deleteConversationQuery);
    const conversations = conversationsOf(c);
    if (!(await conversations.get(id, agentId))) throw new ConversationNotFoundError(id, agentId);
    const forgotten = await ctx.memories.forTenant(tenantOf(c)).forgetConversation(id, { cascade: cascade === 'memories' });
    if (!(await conversations.delete(id, agentId))) throw new ConversationNotFoundError(id, agentId);
    await recordAudit(ctx, c, {
      action: 'conversation.deleted',
      details: { id, agentId, memoriesDeleted: forgotten.deleted, memoriesMarked: forgotten.marked },
    });
    return c.body(null, 204);
  });

  const attachmentRoute = createRoute({
    method: 'get',
    path: '/{id}/attachments/{attachmentId}',
    operationId: 'getConversationAttachment',
    tags: [TAGS.conversations],
    summary: "An image of a conversation's messages",
    description:
      'The bytes of an image a message of the conversation carried as a data URL, with its type. A stored message names its ' +
      'images in `metadata.images` (`attachmentId`, `sha256`, `mediaType`); https images are kept as their URL, not fetched.',
    request: { params: attachmentParams, query: conversationAgentQuery },
    responses: {
      200: {
        description: 'The image.',
        content: Object.fromEntries(IMAGE_MEDIA_TYPES.map((type) => [type, { schema: z.string().meta({ format: 'binary' }) }])),
      },
      404: notFoundResponse('conversation for this agent, or attachment of this conversation'),
    },
  });
  defineRoute(routes, attachmentRoute, async (c) => {
    const { id, attachmentId } = parseWith(attachmentParams, c.req.param(), 'path');
    const { agentId = DEFAULT_AGENT_ID } = parseQuery(c, conversationAgentQuery);
    if (!(await conversationsOf(c).get(id, agentId))) throw new ConversationNotFoundError(id, agentId);
    const image = await ctx.attachments.forTenant(tenantOf(c)).read(id, attachmentId);
    if (!image) throw notFound(`No attachment ${JSON.stringify(attachmentId)} in conversation ${JSON.stringify(id)}`);
    // Stored by hash: the bytes under an id never change.
    c.header('Cache-Control', 'private, max-age=31536000, immutable');
    c.header('X-Content-Type-Options', 'nosniff');
    return c.body(new Uint8Array(image.data), 200, { 'Content-Type': image.mediaType });
  });

  return routes;
}

const attachmentParams = z.strictObject({ id: z.uuid(), attachmentId: z.uuid() });

function target(c: Context): { id: string; agentId: string } {
  const { id } = idParam(c, conversationIdParams);
  const { agentId } = parseQuery(c, conversationAgentQuery);
  return { id, agentId: agentId ?? DEFAULT_AGENT_ID };
}
