import { randomUUID } from 'node:crypto';
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import type { ChatEvent } from '../../chat/chat-service.js';
import { HttpError, notFound } from '../../api/errors.js';
import {
  createWorkflowBody,
  listWorkflowVersionsQuery,
  listWorkflowsQuery,
  patchWorkflowBody,
  runWorkflowBody,
  workflowIdParams,
  workflowPageSchema,
  workflowRunReplySchema,
  workflowSchema,
  workflowVersionPageSchema,
} from '../../api/schemas/workflow-schemas.js';
import { createPgWorkflowStore } from '../../workflows/pg-workflow-store.js';
import { type WorkflowDefinition, workflowDefinitionSchema } from '../../workflows/workflow-definition.js';
import { workflowRunsOver } from '../../workflows/workflow-runs.js';
import { WorkflowExistsError } from '../../workflows/workflow-store.js';
import type { ApiEnv } from '../api-env.js';
import { toSseFrame } from '../chat-event-stream.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, header, jsonBody, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import { tenantOf } from '../tenant-context.js';
import { idParam, parseBody, parseQuery, parseWith } from '../validate.js';

const GRAPH_RULES =
  "Node ids are unique, `entry` and every edge's `from` and `to` name a node, and each `when.outputMatches` compiles as a regular expression: " +
  'otherwise a 400 naming the field, and nothing is written.';

/** The workflow runs of a tenant: started here, answered through `/v1/runs/{runId}/approvals` and `/tool-outputs` when a step waits. */
export function workflowRunsOf(ctx: AppContext, tenantId: string) {
  return workflowRunsOver<ChatEvent>({
    tenantId,
    db: ctx.database.db,
    runs: ctx.runs.forTenant(tenantId),
    liveRuns: ctx.liveRuns,
    chat: ctx.chat.forTenant(tenantId),
    runTtlSeconds: ctx.config.RUN_TTL_SECONDS,
    eventOf: (event) => event,
  });
}

/** `/v1/workflows`: graphs of agent steps, versioned as agents are, each run a run whose steps are its children. */
export function createWorkflowRoutes(ctx: AppContext): ApiRoutes {
  const storeOf = (c: Context<ApiEnv>) => createPgWorkflowStore({ db: ctx.database.db, tenantId: tenantOf(c) });
  const missing = (id: string) => notFound(`No workflow with id ${JSON.stringify(id)}`);
  const workflowNotFound = notFoundResponse('workflow');
  const routes = createApiRoutes();

  const createWorkflowRoute = createRoute({
    method: 'post',
    path: '/',
    operationId: 'createWorkflow',
    tags: [TAGS.workflows],
    summary: 'Create a workflow (version 1)',
    description: `A graph of agent steps: \`nodes\` (each an agent and a prompt template), \`edges\` (with an optional \`when\`), an \`entry\`. ${GRAPH_RULES}`,
    request: { body: jsonBody(createWorkflowBody) },
    responses: {
      201: jsonReply('The new workflow.', workflowSchema, z.object({ Location: header('The new workflow: `/v1/workflows/{id}`.') })),
      409: errorResponse({ codes: ['workflow_exists'], description: 'A workflow with this id exists already.' }),
    },
  });
  defineRoute(routes, createWorkflowRoute, async (c) => {
    const { id, ...definition } = await parseBody(c, createWorkflowBody);
    try {
      const workflow = await storeOf(c).create(id ?? randomUUID(), definition);
      c.header('Location', `/v1/workflows/${encodeURIComponent(workflow.id)}`);
      return c.json(workflow, 201);
    } catch (error) {
      if (error instanceof WorkflowExistsError) throw new HttpError(409, 'workflow_exists', error.message);
      throw error;
    }
  });

  const listRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listWorkflows',
    tags: [TAGS.workflows],
    summary: 'List workflows, newest first',
    request: { query: listWorkflowsQuery },
    responses: { 200: jsonReply('One page.', workflowPageSchema) },
  });
  defineRoute(routes, listRoute, async (c) => {
    const { limit, cursor } = parseQuery(c, listWorkflowsQuery);
    return c.json(await storeOf(c).list({ limit, cursor }));
  });

  const getRoute = createRoute({
    method: 'get',
    path: '/{id}',
    operationId: 'getWorkflow',
    tags: [TAGS.workflows],
    summary: 'Read a workflow at its current version',
    request: { params: workflowIdParams },
    responses: { 200: jsonReply('The workflow.', workflowSchema), 404: workflowNotFound },
  });
  defineRoute(routes, getRoute, async (c) => {
    const { id } = idParam(c, workflowIdParams);
    const workflow = await storeOf(c).get(id);
    if (!workflow) throw missing(id);
    return c.json(workflow);
  });

  const patchRoute = createRoute({
    method: 'patch',
    path: '/{id}',
    operationId: 'patchWorkflow',
    tags: [TAGS.workflows],
    summary: 'Change a workflow (a new version)',
    description: `Only the fields given change, each replaced whole; the definition they leave is checked as a whole. ${GRAPH_RULES}`,
    request: { params: workflowIdParams, body: jsonBody(patchWorkflowBody) },
    responses: { 200: jsonReply('The workflow as changed.', workflowSchema), 404: workflowNotFound },
  });
  defineRoute(routes, patchRoute, async (c) => {
    const { id } = idParam(c, workflowIdParams);
    const patch = await parseBody(c, patchWorkflowBody);
    const workflow = await storeOf(c).update(id, (current) => {
      const next: Record<string, unknown> = { ...current };
      for (const [field, value] of Object.entries(patch)) {
        if (value === null) delete next[field];
        else if (value !== undefined) next[field] = value;
      }
      return parseWith(workflowDefinitionSchema, next, 'body') as WorkflowDefinition;
    });
    if (!workflow) throw missing(id);
    return c.json(workflow);
  });

  const deleteRoute = createRoute({
    method: 'delete',
    path: '/{id}',
    operationId: 'deleteWorkflow',
    tags: [TAGS.workflows],
    summary: 'Delete a workflow and its versions',
    description: 'Its runs stay (`GET /v1/runs/{runId}`).',
    request: { params: workflowIdParams },
    responses: { 204: { description: 'Deleted.' }, 404: workflowNotFound },
  });
  defineRoute(routes, deleteRoute, async (c) => {
    const { id } = idParam(c, workflowIdParams);
    if (!(await storeOf(c).delete(id))) throw missing(id);
    return c.body(null, 204);
  });

  const versionsRoute = createRoute({
    method: 'get',
    path: '/{id}/versions',
    operationId: 'listWorkflowVersions',
    tags: [TAGS.workflows],
    summary: "List a workflow's versions, newest first",
    request: { params: workflowIdParams, query: listWorkflowVersionsQuery },
    responses: { 200: jsonReply('One page.', workflowVersionPageSchema), 404: workflowNotFound },
  });
  defineRoute(routes, versionsRoute, async (c) => {
    const { id } = idParam(c, workflowIdParams);
    const { limit, cursor } = parseQuery(c, listWorkflowVersionsQuery);
    const page = await storeOf(c).versions(id, { limit, cursor });
    if (!page) throw missing(id);
    return c.json(page);
  });

  const runRoute = createRoute({
    method: 'post',
    path: '/{id}/runs',
    operationId: 'runWorkflow',
    tags: [TAGS.workflows],
    summary: 'Run a workflow',
    description:
      "Runs the nodes from `entry`, each a run of its agent (a child of the workflow's run) on its filled prompt, taking after each the first " +
      'outgoing edge whose `when` holds, until none does (`completed`) or `maxSteps` is reached (`failed`, `max_steps`). The run is a run: ' +
      '`GET /v1/runs/{runId}` lists its steps as `children`, and `POST /v1/runs/{runId}/cancel` cancels it and its running step. A step that ' +
      "waits for approval or a client tool pauses the run (`requires_approval`/`requires_action`, its calls listed with the step's `runId`): " +
      "answer them through the workflow's run (`POST /v1/runs/{runId}/approvals` or `/tool-outputs`), which resumes the step, then the graph.",
    request: { params: workflowIdParams, body: jsonBody(runWorkflowBody) },
    responses: {
      200: {
        description: 'The run as it ended; with `stream: true`, Server-Sent Events ending with `done`.',
        content: { 'application/json': { schema: workflowRunReplySchema }, 'text/event-stream': { schema: z.string() } },
      },
      404: workflowNotFound,
    },
  });
  defineRoute(routes, runRoute, async (c) => {
    const { id } = idParam(c, workflowIdParams);
    const body = await parseBody(c, runWorkflowBody);
    const tenantId = tenantOf(c);
    const workflow = await storeOf(c).get(id);
    if (!workflow) throw missing(id);
    const runsOf = workflowRunsOf(ctx, tenantId);
    const request = { input: body.input, ...(body.userId !== undefined ? { userId: body.userId } : {}) };
    if (!body.stream) return c.json(await runsOf.start(workflow, { ...request, signal: c.req.raw.signal }));
    return streamSSE(c, async (stream) => {
      let writes = Promise.resolve();
      const write = (event: string, data: unknown, seq?: number) => {
        writes = writes.then(() =>
          stream.aborted ? undefined : stream.writeSSE({ ...(seq !== undefined ? { id: String(seq) } : {}), event, data: JSON.stringify(data) }),
        );
      };
      try {
        const reply = await runsOf.start(workflow, {
          ...request,
          onEvent: (event, seq) => {
            const frame = toSseFrame(event, ctx.logger);
            if (frame) write(frame.event, frame.data, seq);
          },
        });
        write('done', reply);
      } catch (error) {
        const frame = toSseFrame({ type: 'error', error }, ctx.logger);
        if (frame) write(frame.event, frame.data);
      }
      await writes;
    });
  });

  return routes;
}
