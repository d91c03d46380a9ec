import { randomUUID } from 'node:crypto';
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AgentSettings } from '../../agents/agent-config.js';
import { type AgentDeployment, deploymentIssues } from '../../agents/deployment-check.js';
import { castIssues } from '../../agents/cast-settings.js';
import type { AppContext } from '../../app-context.js';
import { recordAudit } from '../audit-record.js';
import type { ApiEnv } from '../api-env.js';
import { notFound, validationError } from '../../api/errors.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, header, jsonBody, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import { agentPageSchema, agentSchema, agentVersionPageSchema, agentVersionSchema } from '../../api/schemas/agent-reply-schemas.js';
import {
  agentIdParams,
  agentVersionParams,
  createAgentBody,
  listAgentVersionsQuery,
  listAgentsQuery,
  patchAgentBody,
} from '../../api/schemas/agent-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { idParam, parseBody, parseQuery, parseWith } from '../validate.js';

const DEPLOYMENT_RULES =
  "`provider` must be one of the server's LLM_PROVIDERS, and `budget.maxUsd` needs a price in LLM_PRICES for the " +
  "agent's model (LLM_MODEL when it names none); either is a 400 naming the field.";

/** `/v1/agents`: the agents of the request's tenant, each change a new version. */
export function createAgentRoutes(ctx: AppContext): ApiRoutes {
  const agentsOf = (c: Context<ApiEnv>) => ctx.agents.forTenant(tenantOf(c));
  const deployment: AgentDeployment = { providers: ctx.config.LLM_PROVIDERS, prices: ctx.config.LLM_PRICES, defaultModel: ctx.config.LLM_MODEL };
  const refuseUnrunnable = (settings: AgentSettings, changed?: ReadonlySet<string>, id?: string) => {
    const issues = [...deploymentIssues(settings, deployment, changed), ...(id !== undefined ? castIssues(id, settings.cast) : [])];
    if (issues.length > 0) throw validationError(issues, 'body');
  };
  const agentNotFound = notFoundResponse('agent');
  const routes = createApiRoutes();

  const createAgentRoute = createRoute({
    method: 'post',
    path: '/',
    operationId: 'createAgent',
    tags: [TAGS.agents],
    summary: 'Create an agent (version 1)',
    description:
      'An agent is the settings a chat runs with for an `agentId`: its instructions, model, tools, budget and recall. Its id ' +
      'is that `agentId`, the namespace of its memories and conversations; a new UUID when the body names none. ' +
      `Unset fields keep the deployment's defaults. ${DEPLOYMENT_RULES}`,
    request: { body: jsonBody(createAgentBody) },
    responses: {
      201: jsonReply('The new agent.', agentSchema, z.object({ Location: header('The new agent: `/v1/agents/{id}`.') })),
      409: errorResponse({ codes: ['agent_exists'], description: 'An agent with this id exists already.' }),
    },
  });
  defineRoute(routes, createAgentRoute, async (c) => {
    const { id: given, ...settings } = await parseBody(c, createAgentBody);
    const id = given ?? randomUUID();
    refuseUnrunnable(settings, undefined, id);
    const agent = await agentsOf(c).create(id, settings);
    c.header('Location', `/v1/agents/${encodeURIComponent(agent.id)}`);
    return c.json(agent, 201);
  });

  const listAgentsRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listAgents',
    tags: [TAGS.agents],
    summary: 'List agents, newest first',
    request: { query: listAgentsQuery },
    responses: { 200: jsonReply('One page.', agentPageSchema) },
  });
  defineRoute(routes, listAgentsRoute, async (c) => {
    const { limit, cursor } = parseQuery(c, listAgentsQuery);
    return c.json(await agentsOf(c).list({ limit, cursor }));
  });

  const getAgentRoute = createRoute({
    method: 'get',
    path: '/{id}',
    operationId: 'getAgent',
    tags: [TAGS.agents],
    summary: 'Read an agent at its current version',
    request: { params: agentIdParams },
    responses: { 200: jsonReply('The agent.', agentSchema), 404: agentNotFound },
  });
  defineRoute(routes, getAgentRoute, async (c) => {
    const { id } = idParam(c, agentIdParams);
    const agent = await agentsOf(c).get(id);
    if (!agent) throw agentMissing(id);
    return c.json(agent);
  });

  const patchAgentRoute = createRoute({
    method: 'patch',
    path: '/{id}',
    operationId: 'patchAgent',
    tags: [TAGS.agents],
    summary: 'Change some settings of an agent (a new version)',
    description:
      "Only the fields given change, each replaced whole (a nested object too); `null` clears a field, so the deployment's " +
      'default applies again (`name` cannot be cleared). A change writes a new version; a patch that changes nothing ' +
      `keeps the current one. ${DEPLOYMENT_RULES}`,
    request: { params: agentIdParams, body: jsonBody(patchAgentBody) },
    responses: { 200: jsonReply('The agent as changed.', agentSchema), 404: agentNotFound },
  });
  defineRoute(routes, patchAgentRoute, async (c) => {
    const { id } = idParam(c, agentIdParams);
    const patch = await parseBody(c, patchAgentBody);
    const changed = new Set(Object.entries(patch).flatMap(([field, value]) => (value === undefined ? [] : [field])));
    // Checked on the settings the patch leaves, inside the update: a model changed alone may lose an existing budget its price.
    const agent = await agentsOf(c).update(id, patch, { check: (next) => refuseUnrunnable(next, changed, id) });
    if (!agent) throw agentMissing(id);
    return c.json(agent);
  });

  const deleteAgentRoute = createRoute({
    method: 'delete',
    path: '/{id}',
    operationId: 'deleteAgent',
    tags: [TAGS.agents],
    summary: 'Delete an agent and its versions',
    description: "Its memories and conversations stay: the id is their namespace, and a chat under it runs with the deployment's defaults.",
    request: { params: agentIdParams },
    responses: { 204: { description: 'Deleted.' }, 404: agentNotFound },
  });
  defineRoute(routes, deleteAgentRoute, async (c) => {
    const { id } = idParam(c, agentIdParams);
    if (!(await agentsOf(c).delete(id))) throw agentMissing(id);
    await recordAudit(ctx, c, { action: 'agent.deleted', details: { id } });
    return c.body(null, 204);
  });

  const listVersionsRoute = createRoute({
    method: 'get',
    path: '/{id}/versions',
    operationId: 'listAgentVersions',
    tags: [TAGS.agents],
    summary: "List an agent's versions, newest first",
    request: { params: agentIdParams, query: listAgentVersionsQuery },
    responses: { 200: jsonReply('One page.', agentVersionPageSchema), 404: agentNotFound },
  });
  defineRoute(routes, listVersionsRoute, async (c) => {
    const { id } = idParam(c, agentIdParams);
    const { limit, cursor } = parseQuery(c, listAgentVersionsQuery);
    const page = await agentsOf(c).versions(id, { limit, cursor });
    if (!page) throw agentMissing(id);
    return c.json(page);
  });

  const getVersionRoute = createRoute({
    method: 'get',
    path: '/{id}/versions/{version}',
    operationId: 'getAgentVersion',
    tags: [TAGS.agents],
    summary: 'Read one version of an agent',
    request: { params: agentVersionParams },
    responses: { 200: jsonReply('The version.', agentVersionSchema), 404: notFoundResponse('agent or version') },
  });
  defineRoute(routes, getVersionRoute, async (c) => {
    const { id, version } = parseWith(agentVersionParams, { id: c.req.param('id'), version: c.req.param('version') }, 'path');
    const found = await agentsOf(c).getVersion(id, version);
    if (!found) throw notFound(`Agent ${JSON.stringify(id)} has no version ${version}`);
    return c.json(found);
  });

  return routes;
}

function agentMissing(id: string) {
  return notFound(`No agent with id ${JSON.stringify(id)}`);
}
