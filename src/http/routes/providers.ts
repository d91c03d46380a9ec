import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import { HttpError, notFound } from '../../api/errors.js';
import { providerListSchema, providerModelListSchema, providerNameParams } from '../../api/schemas/provider-schemas.js';
import { ProviderUnavailableError, configuredProviders, createProviderModels } from '../../llm/provider-models.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import { parseWith } from '../validate.js';

/** `/v1/providers`: the deployment's LLM providers and the models each offers, for choosing an agent's model. */
export function createProviderRoutes(ctx: Pick<AppContext, 'config'>): ApiRoutes {
  const { config } = ctx;
  // One per app: the providers are the deployment's, the same for every tenant, and so is their cache.
  const providers = createProviderModels({ providers: configuredProviders(config), timeoutMs: Math.min(config.LLM_TIMEOUT_MS, 15_000) });
  const routes = createApiRoutes();

  const listRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listProviders',
    tags: [TAGS.agents],
    summary: "List the deployment's LLM providers",
    description: '`default` when LLM_BASE_URL (or LLM_API_KEY) is set, then LLM_PROVIDERS; with base URL and default model, never a key.',
    responses: { 200: jsonReply('The providers.', providerListSchema) },
  });
  defineRoute(routes, listRoute, (c) => c.json({ providers: providers.list() }));

  const modelsRoute = createRoute({
    method: 'get',
    path: '/{name}/models',
    operationId: 'listProviderModels',
    tags: [TAGS.agents],
    summary: 'List the models a provider offers',
    description: "As the provider's own `GET /models` lists them; asked at most once every few minutes per provider.",
    request: { params: providerNameParams },
    responses: {
      200: jsonReply('The models.', providerModelListSchema),
      404: notFoundResponse('provider'),
      502: errorResponse({ codes: ['llm_unavailable'], description: 'The provider could not be reached, or did not answer with a model list.' }),
    },
  });
  defineRoute(routes, modelsRoute, async (c) => {
    const { name } = parseWith(providerNameParams, c.req.param(), 'path');
    if (!providers.has(name)) throw notFound(`No provider ${JSON.stringify(name)}: GET /v1/providers lists them`);
    try {
      return c.json(await providers.models(name));
    } catch (error) {
      if (error instanceof ProviderUnavailableError) throw new HttpError(502, 'llm_unavailable', error.message);
      throw error;
    }
  });

  return routes;
}
