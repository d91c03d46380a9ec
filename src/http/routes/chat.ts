import { type Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppContext } from '../../app-context.js';
import { type ChatErrorReply, describeChatError } from '../../chat/chat-error.js';
import type { ChatEvent } from '../../chat/chat-service.js';
import { isDatabaseUnavailable } from '../../db/database-unavailable.js';
import { DEFAULT_AGENT_ID } from '../../memory/memory-types.js';
import { chatBody } from '../schemas/chat-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody } from '../validate.js';

/**
 * `POST /v1/chat`: one grounded turn. JSON by default; Server-Sent Events with `stream: true` or
 * `Accept: text/event-stream` (an explicit `stream: false` wins over the header).
 */
export function createChatRoutes(ctx: AppContext): Hono {
  const body = chatBody(ctx.config.MAX_TOP_K);
  const routes = new Hono();

  routes.post('/', async (c) => {
    // Validated before any streaming starts, so a bad request is still a plain 400.
    const { stream: streamFlag, agentId, ...rest } = await parseBody(c, body);
    const streaming = streamFlag ?? (c.req.header('accept') ?? '').includes('text/event-stream');
    const request = { ...rest, agentId: agentId ?? DEFAULT_AGENT_ID };
    const service = ctx.chat.forTenant(tenantOf(c));
    // Checked before any streaming starts, so another agent's (or tenant's) conversation id is a plain 404.
    await service.assertCanContinue(request.conversationId, request.agentId);

    if (!streaming) {
      try {
        // The request's signal fires when the client disconnects, which cancels the LLM call and tools.
        return c.json(await service.chat({ ...request, stream: false, signal: c.req.raw.signal }));
      } catch (err) {
        const described = describeChatError(err);
        if (!described) throw err;
        return errorReply(c, described);
      }
    }

    return streamSSE(c, async (stream) => {
      const controller = new AbortController();
      const abort = () => controller.abort(new Error('client disconnected'));
      stream.onAbort(abort);
      c.req.raw.signal.addEventListener('abort', abort, { once: true });
      // Events arrive synchronously from the turn; writes are async, so they are chained to keep order.
      let writes = Promise.resolve();
      const send = (event: string, data: unknown) => {
        writes = writes.then(() => (stream.aborted ? undefined : stream.writeSSE({ event, data: JSON.stringify(data) })));
      };
      const onEvent = (event: ChatEvent) => {
        switch (event.type) {
          case 'retrieval':
            return send('retrieval', { conversationId: event.conversationId, sources: event.sources });
          case 'delta':
            return send('delta', { text: event.text });
          case 'tool_start':
            return send('tool_start', { id: event.id, name: event.name, arguments: event.arguments });
          case 'tool_end':
            return send('tool_end', { id: event.id, name: event.name, isError: event.isError, result: event.result, sources: event.sources });
          case 'compaction':
            return send('compaction', {
              strategy: event.strategy,
              strategies: event.strategies,
              tokensBefore: event.tokensBefore,
              tokensAfter: event.tokensAfter,
              limit: event.limit,
            });
          case 'done':
            return send('done', event.reply);
          case 'error': {
            if (controller.signal.aborted) return;
            // Headers are long gone, so the status travels in the event next to the usual error body.
            const described = describeChatError(event.error) ??
              (isDatabaseUnavailable(event.error)
                ? { status: 503, code: 'database_unavailable', message: 'The database is unavailable; retry later.' }
                : { status: 500, code: 'internal_error', message: 'Internal server error' });
            if (described.status === 500) ctx.logger.error({ err: event.error }, 'POST /v1/chat stream failed');
            return send('error', { status: described.status, ...errorBody(described) });
          }
        }
      };
      try {
        await service.chat({ ...request, stream: true, signal: controller.signal, onEvent });
      } catch {
        // Already reported as an `error` event (or nobody is listening any more).
      } finally {
        c.req.raw.signal.removeEventListener('abort', abort);
        await writes;
      }
    });
  });

  return routes;
}

function errorBody(e: { code: string; message: string }) {
  return { error: { code: e.code, message: e.message, details: null } };
}

function errorReply(c: Context, e: ChatErrorReply) {
  if (e.retryAfterSeconds !== undefined) c.header('Retry-After', String(e.retryAfterSeconds));
  // 499 (client closed request) is nginx's, not in hono's status type; nobody reads it anyway.
  return c.json(errorBody(e), e.status as ContentfulStatusCode);
}
