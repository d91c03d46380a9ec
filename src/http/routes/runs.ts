import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import type { ResumeAnswers } from '../../chat/chat-service.js';
import type { ApiEnv } from '../api-env.js';
import { HttpError } from '../../api/errors.js';
import { streamLiveRun, streamTurn } from '../chat-event-stream.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, jsonBody, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import { chatStreamEventSchema, runSchema, turnReplySchema } from '../../api/schemas/chat-reply-schemas.js';
import { approvalsBody, runIdParams, toolOutputsBody } from '../../api/schemas/run-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody, parseWith } from '../validate.js';

const turnReply = {
  description: 'The rest of the turn: the answer, or the next pause. One JSON reply, or Server-Sent Events with `stream: true`.',
  content: { 'application/json': { schema: turnReplySchema }, 'text/event-stream': { schema: chatStreamEventSchema } },
};

/** `/v1/runs`: a chat turn's run — its status, the answers a paused one waits for, cancelling it, its events. */
export function createRunRoutes(ctx: AppContext): ApiRoutes {
  const chatOf = (c: Context<ApiEnv>) => ctx.chat.forTenant(tenantOf(c));
  const routes = createApiRoutes();
  const notWaiting = errorResponse({
    codes: ['run_not_waiting', 'run_expired', 'tool_call_not_pending'],
    description: 'The run is not waiting for these answers: it waits for others, has ended or expired, or a call id is unknown or answered already.',
  });

  const getRunRoute = createRoute({
    method: 'get',
    path: '/{runId}',
    operationId: 'getRun',
    tags: [TAGS.runs],
    summary: 'Read a run: its status, usage and what it waits for',
    request: { params: runIdParams },
    responses: { 200: jsonReply('The run.', runSchema), 404: notFoundResponse('run') },
  });
  defineRoute(routes, getRunRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    return c.json(await chatOf(c).getRun(runId));
  });

  /** Answers a pause; streams like the chat when asked. Refusals come before the stream starts, as plain errors. */
  const resume = async (c: Context<ApiEnv>, answers: ResumeAnswers, stream: boolean | undefined) => {
    const proceed = await chatOf(c).beginResume(answers);
    if (!stream) return c.json(await proceed({ stream: false, signal: c.req.raw.signal }));
    return streamTurn(c, ctx.logger, (listener) => proceed(listener));
  };

  const toolOutputsRoute = createRoute({
    method: 'post',
    path: '/{runId}/tool-outputs',
    operationId: 'submitToolOutputs',
    tags: [TAGS.runs],
    summary: "Answer a run's client tool calls and resume it",
    description:
      'The run must be `requires_action`; every call of its `requiredAction.toolCalls` needs one output. The turn goes on: ' +
      'the reply is what `POST /v1/chat` would answer — the answer, or the next pause.',
    request: { params: runIdParams, body: jsonBody(toolOutputsBody) },
    responses: { 200: turnReply, 404: notFoundResponse('run'), 409: notWaiting },
  });
  defineRoute(routes, toolOutputsRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    const { toolOutputs, stream } = await parseBody(c, toolOutputsBody);
    return resume(c, { runId, toolOutputs }, stream);
  });

  const approvalsRoute = createRoute({
    method: 'post',
    path: '/{runId}/approvals',
    operationId: 'submitApprovals',
    tags: [TAGS.runs],
    summary: "Approve or deny a run's tool calls and resume it",
    description:
      'The run must be `requires_approval`; every call of its `approvals` needs one decision. Approved calls run; a denied ' +
      'one does not, and the model is told it was denied and why, and may adapt.',
    request: { params: runIdParams, body: jsonBody(approvalsBody) },
    responses: { 200: turnReply, 404: notFoundResponse('run'), 409: notWaiting },
  });
  defineRoute(routes, approvalsRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    const { decisions, stream } = await parseBody(c, approvalsBody);
    return resume(c, { runId, decisions }, stream);
  });

  const cancelRoute = createRoute({
    method: 'post',
    path: '/{runId}/cancel',
    operationId: 'cancelRun',
    tags: [TAGS.runs],
    summary: 'Cancel a run',
    description: 'A running run is aborted (its model call and tools); a waiting one is dropped. Either way the turn is not stored.',
    request: { params: runIdParams },
    responses: {
      200: jsonReply('The cancelled run.', runSchema),
      404: notFoundResponse('run'),
      409: errorResponse({ codes: ['run_not_waiting'], description: 'The run has ended already.' }),
    },
  });
  defineRoute(routes, cancelRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    return c.json(await chatOf(c).cancelRun(runId));
  });

  const eventsRoute = createRoute({
    method: 'get',
    path: '/{runId}/events',
    operationId: 'runEvents',
    tags: [TAGS.runs],
    summary: "Listen to a run's events again",
    description:
      'For a client whose stream broke: with `Last-Event-ID` (the `id` of the last event it got), the events after it are sent ' +
      'again, then the new ones until the turn ends or pauses. Only while the run is in progress on this server (and for 30 s after).',
    request: { params: runIdParams, headers: z.object({ 'last-event-id': z.string().optional() }) },
    responses: {
      200: { description: 'The events, as `POST /v1/chat` streams them.', content: { 'text/event-stream': { schema: chatStreamEventSchema } } },
      404: notFoundResponse('run'),
      409: errorResponse({ codes: ['run_not_waiting'], description: 'The run is not in progress here: read it with `GET /v1/runs/{runId}`.' }),
    },
  });
  defineRoute(routes, eventsRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    const service = chatOf(c);
    const run = await service.getRun(runId);
    const live = service.liveRun(runId);
    if (!live) throw new HttpError(409, 'run_not_waiting', `Run ${runId} is ${run.status}, not in progress on this server`);
    const raw = c.req.header('last-event-id');
    const after = raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined;
    return streamLiveRun(c, ctx.logger, live, after);
  });

  return routes;
}
