import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import { DEFAULT_AGENT_ID } from '../../memory/memory-types.js';
import { streamTurn } from '../chat-event-stream.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, jsonBody, notFoundResponse, retryAfterHeader } from '../openapi/route-responses.js';
import { chatStreamEventSchema, turnReplySchema } from '../../api/schemas/chat-reply-schemas.js';
import { chatBody, chatMessageSchema } from '../../api/schemas/chat-schemas.js';
import { textAndImagesOf } from '../../api/schemas/content-parts-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody } from '../validate.js';

/**
 * `POST /v1/chat`: one grounded turn. JSON by default; Server-Sent Events with `stream: true` or
 * `Accept: text/event-stream` (an explicit `stream: false` wins over the header).
 */
export function createChatRoutes(ctx: AppContext): ApiRoutes {
  const { IMAGE_MAX_BYTES: maxBytes, IMAGE_MAX_PER_MESSAGE: maxPerMessage } = ctx.config;
  const body = chatBody(ctx.config.MAX_TOP_K).extend({ message: chatMessageSchema({ maxBytes, maxPerMessage }) });
  const routes = createApiRoutes();

  const chatRoute = createRoute({
    method: 'post',
    path: '/',
    operationId: 'chat',
    tags: [TAGS.chat],
    summary: "Answer a message from the agent's memories and documents, with citations",
    description:
      "Recalls the `topK` best memories and document chunks, and the 3 best past turns of the agent's other conversations with " +
      'the same `userId`, then lets the model answer (and call `search_memories`, ' +
      '`save_memory`, `delete_memory`, `search_knowledge`), citing sources as `[n]`. Without a configured LLM the reply is ' +
      'extractive. With `conversationId`, the turn continues that stored conversation (compacted to fit the model), or starts ' +
      'one under that id. JSON by default; Server-Sent Events with `stream: true` or `Accept: text/event-stream` (an explicit ' +
      '`stream: false` wins): `retrieval`, then for each model call `turn_start`, its `thinking` (the reasoning) and `delta`s, `turn_end` ' +
      '(`retry` when a call is retried), with `tool_start`/`tool_end` and `compaction`, then `done` (the JSON reply) or ' +
      '`error` (the error body plus its `status`). With client `tools`, a call to one pauses the turn (`requires_action`); with an agent ' +
      'record, a call to a tool in its approval list waits for a decision (`requires_approval`). Every reply names its `runId`. ' +
      'Disconnecting cancels the LLM request and running tools (a stream after a grace period, RUN_RECONNECT_GRACE_MS, in which the ' +
      'client may reconnect to `GET /v1/runs/{runId}/events`).',
    request: { body: jsonBody(body) },
    responses: {
      200: {
        description:
          'The answer (`status: "completed"`), or a pause for client tools (`requires_action`) or approval (`requires_approval`): one JSON reply, ' +
          'or a stream of events (`ChatStreamEvent`, one per SSE frame).',
        content: { 'application/json': { schema: turnReplySchema }, 'text/event-stream': { schema: chatStreamEventSchema } },
      },
      404: notFoundResponse('conversation for this agent and user: `conversationId` belongs to another agent, or another user'),
      422: errorResponse({
        codes: ['context_overflow', 'content_filtered'],
        description: "The message and its sources exceed the model's window, or the provider's content filter refused.",
      }),
      429: errorResponse({ codes: ['llm_rate_limited'], description: 'The LLM provider rate-limits the server.', headers: retryAfterHeader() }),
      502: errorResponse({ codes: ['llm_auth_error', 'llm_error'], description: "The provider rejected the server's key, or the request." }),
      503: errorResponse({ codes: ['llm_unavailable'], description: 'The provider failed (5xx, connection).', headers: retryAfterHeader() }),
      504: errorResponse({ codes: ['llm_timeout'], description: 'No answer from the provider within LLM_TIMEOUT_MS.' }),
    },
  });
  defineRoute(routes, chatRoute, async (c) => {
    // Validated before any streaming starts, so a bad request is still a plain 400.
    const { stream: streamFlag, agentId, tools, ...rest } = await parseBody(c, body);
    const streaming = streamFlag ?? (c.req.header('accept') ?? '').includes('text/event-stream');
    // `instructions` here add to the agent's; the chat's own `instructions` (an OpenAI client's system messages) replace them.
    const { instructions: turnInstructions, ...fields } = rest;
    const request = {
      ...fields,
      ...textAndImagesOf(fields.message),
      agentId: agentId ?? DEFAULT_AGENT_ID,
      ...(tools ? { clientTools: tools } : {}),
      ...(turnInstructions ? { turnInstructions } : {}),
    };
    const service = ctx.chat.forTenant(tenantOf(c));
    // Checked before any streaming starts, so another agent's (or tenant's) conversation id is a plain 404.
    await service.assertCanContinue(request.conversationId, request.agentId, request.userId);

    if (!streaming) {
      // The request's signal fires when the client disconnects, which cancels the LLM call and tools.
      // A failure (the LLM's included) is answered by the app's error handler: see ../../api/error-mapping.ts.
      return c.json(await service.chat({ ...request, stream: false, signal: c.req.raw.signal }));
    }
    return streamTurn(c, ctx.logger, (listener) => service.chat({ ...request, ...listener }));
  });

  return routes;
}
