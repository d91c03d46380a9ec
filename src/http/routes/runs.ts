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
import { textAndImagesOf } from '../../api/schemas/content-parts-schemas.js';
import {
  approvalsBody,
  getRunQuery,
  resumeBody,
  runIdParams,
  runMessageBody,
  runMessageReply,
  toolOutputsBodyWithImages,
} from '../../api/schemas/run-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { workflowRunReplySchema } from '../../api/schemas/workflow-schemas.js';
import { isWorkflowState } from '../../workflows/workflow-runs.js';
import { workflowRunsOf } from './workflows.js';
import { parseBody, parseWith, readJsonBody } from '../validate.js';

const turnReply = {
  description: 'The rest of the turn: the answer, or the next pause. One JSON reply, or Server-Sent Events with `stream: true`.',
  content: {
    // A workflow run's pause is answered with the workflow's reply (`POST /v1/workflows/{id}/runs`).
    'application/json': { schema: z.union([turnReplySchema, workflowRunReplySchema]) },
    'text/event-stream': { schema: chatStreamEventSchema },
  },
};

/** `/v1/runs`: a chat turn's run — its status, the answers a paused one waits for, cancelling it, its events. */
export function createRunRoutes(ctx: AppContext): ApiRoutes {
  const chatOf = (c: Context<ApiEnv>) => ctx.chat.forTenant(tenantOf(c));
  const routes = createApiRoutes();
  const toolOutputsBodyHttp = toolOutputsBodyWithImages({ maxBytes: ctx.config.IMAGE_MAX_BYTES, maxPerMessage: ctx.config.IMAGE_MAX_PER_MESSAGE });
  const notWaiting = errorResponse({
    codes: ['run_not_waiting', 'run_expired', 'tool_call_not_pending', 'answer_through_parent'],
    description:
      'The run is not waiting for these answers: it waits for others, has ended or expired, or a call id is unknown or answered already; ' +
      'or it is a delegated run its parent waits on, answered through the parent (`answer_through_parent`).',
  });

  const getRunRoute = createRoute({
    method: 'get',
    path: '/{runId}',
    operationId: 'getRun',
    tags: [TAGS.runs],
    summary: 'Read a run: its status, usage and what it waits for',
    description: "The model's reasoning is kept with the run but shown only with `includeReasoning=true`: a reader who did not ask never gets it.",
    request: { params: runIdParams, query: getRunQuery },
    responses: { 200: jsonReply('The run.', runSchema), 404: notFoundResponse('run') },
  });
  defineRoute(routes, getRunRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    const { includeReasoning } = parseWith(getRunQuery, c.req.query(), 'query');
    return c.json(await chatOf(c).getRun(runId, includeReasoning ? { includeReasoning } : {}));
  });

  /** Answers a pause; streams like the chat when asked. Refusals come before the stream starts, as plain errors. */
  const resume = async (c: Context<ApiEnv>, answers: ResumeAnswers, stream: boolean | undefined) => {
    // A paused workflow run goes on through its workflow: its waiting step first, then the graph (one JSON reply).
    const tenantId = tenantOf(c);
    if (isWorkflowState((await ctx.runs.forTenant(tenantId).load(answers.runId))?.state)) {
      const toolOutputs = answers.toolOutputs?.map(({ toolCallId, output }) => ({ toolCallId, output }));
      return c.json(await workflowRunsOf(ctx, tenantId).resume({ ...answers, ...(toolOutputs ? { toolOutputs } : {}) }, { signal: c.req.raw.signal }));
    }
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
    request: { params: runIdParams, body: jsonBody(toolOutputsBodyHttp) },
    responses: { 200: turnReply, 404: notFoundResponse('run'), 409: notWaiting },
  });
  defineRoute(routes, toolOutputsRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    const { toolOutputs, stream } = await parseBody(c, toolOutputsBodyHttp);
    const outputs = toolOutputs.map(({ toolCallId, runId: callRunId, output }) => {
      const { message, images } = textAndImagesOf(output);
      return { toolCallId, ...(callRunId !== undefined ? { runId: callRunId } : {}), output: message, ...(images ? { images } : {}) };
    });
    return resume(c, { runId, toolOutputs: outputs }, stream);
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
      409: errorResponse({
        codes: ['run_not_waiting'],
        description: 'The run has ended already, or its last model call has answered and its turn is being stored.',
      }),
    },
  });
  defineRoute(routes, cancelRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    return c.json(await chatOf(c).cancelRun(runId));
  });

  // Steering, follow-ups and pausing: what a client tells a run that has not ended.
  const notSteerable = errorResponse({
    codes: ['run_finished', 'run_not_running', 'run_not_live'],
    description:
      '`run_finished`: the run has ended (or made its last model call). `run_not_running`: it waits (paused, or for tool outputs or ' +
      'approvals). `run_not_live`: it runs on another server, or on none any more (lost in a restart).',
  });
  const messageRefused = errorResponse({
    codes: ['run_finished', 'run_not_running', 'run_not_live', 'follow_ups_full'],
    description:
      '`run_finished`: the run has ended (or made its last model call). `run_not_running`: a steer while it waits (paused, or for tool ' +
      'outputs or approvals). `run_not_live`: a steer while it runs on another server, or on none any more (lost in a restart). ' +
      '`follow_ups_full`: the run already holds 32 follow-ups.',
  });

  const messagesRoute = createRoute({
    method: 'post',
    path: '/{runId}/messages',
    operationId: 'sendRunMessage',
    tags: [TAGS.runs],
    summary: 'Steer a running turn, or queue a follow-up',
    description:
      '`steer`: the message joins the running turn as a user message before its next model call (after the tool calls in flight), and ' +
      'its stream says so with a `steer` event; only on the server that runs the turn. `follow_up`: once the turn completes, the message ' +
      'starts the next turn of the conversation as a run of its own (`followUps` of `GET /v1/runs/{runId}`); a run that fails or is ' +
      'cancelled starts none. A follow-up is accepted while the run runs or waits.',
    request: { params: runIdParams, body: jsonBody(runMessageBody) },
    responses: { 202: jsonReply('The message is queued.', runMessageReply), 404: notFoundResponse('run'), 409: messageRefused },
  });
  defineRoute(routes, messagesRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    const body = await parseBody(c, runMessageBody);
    return c.json(await chatOf(c).sendMessage(runId, body), 202);
  });

  const pauseRoute = createRoute({
    method: 'post',
    path: '/{runId}/pause',
    operationId: 'pauseRun',
    tags: [TAGS.runs],
    summary: 'Pause a running turn at its next step boundary',
    description:
      'The turn stops before its next model call (its tool calls in flight finish first) with status `paused`; its stream ends with a ' +
      '`paused` event. Resume it with `POST /v1/runs/{runId}/resume`; unanswered, it expires as a waiting run does. Only on the server ' +
      'that runs the turn.',
    request: { params: runIdParams },
    responses: { 202: jsonReply('The pause is asked for; the run as it is now.', runSchema), 404: notFoundResponse('run'), 409: notSteerable },
  });
  defineRoute(routes, pauseRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    return c.json(await chatOf(c).requestPause(runId), 202);
  });

  const resumeRoute = createRoute({
    method: 'post',
    path: '/{runId}/resume',
    operationId: 'resumeRun',
    tags: [TAGS.runs],
    summary: 'Resume a paused run',
    description:
      'The run must be `paused` (a run waiting for tool outputs or approvals is answered by its own route). The turn goes on: the reply ' +
      'is what `POST /v1/chat` would answer — the answer, or the next pause.',
    request: { params: runIdParams, body: jsonBody(resumeBody, false) },
    responses: { 200: turnReply, 404: notFoundResponse('run'), 409: notWaiting },
  });
  defineRoute(routes, resumeRoute, async (c) => {
    const { runId } = parseWith(runIdParams, c.req.param(), 'path');
    // The body is optional: `{stream: true}` asks for Server-Sent Events.
    const { stream } = parseWith(resumeBody, (await readJsonBody(c)) ?? {}, 'body');
    return resume(c, { runId }, stream);
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
