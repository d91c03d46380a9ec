import { OpenAPIHono, type RouteConfig, createRoute } from '@hono/zod-openapi';
import type { Handler, MiddlewareHandler } from 'hono';
import type { BlankEnv } from 'hono/types';
import { z } from 'zod';
import type { ApiEnv } from '../api-env.js';
import { rejectUnknownQueryParameters } from '../validate.js';

/**
 * A group of routes, typed with what the API's middleware puts on the context. Mounting one with
 * `app.route(prefix, routes)` carries its route declarations along, under the prefix: the OpenAPI
 * document is generated from the app's declarations.
 */
export type ApiRoutes = OpenAPIHono<ApiEnv>;

export function createApiRoutes(): ApiRoutes {
  return new OpenAPIHono<ApiEnv>();
}

/**
 * The whole API, with the route groups mounted. Its own context is untyped, so that it stays a
 * plain `Hono` to servers and tests; the groups, where handlers read `tenantId`, are `ApiRoutes`.
 */
export type ApiApp = OpenAPIHono<BlankEnv>;

export function createApiApp(): ApiApp {
  return new OpenAPIHono<BlankEnv>();
}

/** A route as the document describes it: `createRoute`'s config, with an OpenAPI path (`/{key}`). */
export type RouteDeclaration = Omit<RouteConfig, 'middleware' | 'hide'>;

/** `/{key}/chunks` as Hono's `/:key/chunks`, so handlers read typed path parameters. */
type HonoPath<P extends string> = P extends `${infer Start}/{${infer Param}}${infer Rest}` ? `${Start}/:${Param}${HonoPath<Rest>}` : P;

/**
 * Registers a route and its declaration together: the handler answers requests, the declaration
 * (schemas, replies, summary) goes into the OpenAPI document.
 *
 * The handler validates its own input (see ../validate.ts) rather than through the declared
 * schemas, as `OpenAPIHono.openapi` would: that one wants a JSON content type (`curl -d` sends
 * another), splits no comma-separated lists and words its 400s differently. Only the names of
 * the query parameters are checked here, against the declared query schema, before the handler.
 */
export function defineRoute<const R extends RouteDeclaration>(routes: ApiRoutes, declaration: R, handler: Handler<ApiEnv, HonoPath<R['path']>>): void {
  const route = createRoute(declaration);
  routes.openAPIRegistry.registerPath(route);
  // One rule for every route, whether or not its handler reads the query: a parameter it does not declare is a 400.
  const parameters = queryParameterNames(declaration.request?.query);
  const checkQuery: MiddlewareHandler<ApiEnv> = (c, next) => {
    rejectUnknownQueryParameters(c, parameters);
    return next();
  };
  routes.on(route.method.toUpperCase(), route.getRoutingPath(), checkQuery, handler);
}

/** The parameters a route's query schema declares; none without one. */
function queryParameterNames(schema: unknown): ReadonlySet<string> {
  if (schema === undefined) return new Set();
  if (schema instanceof z.ZodObject) return new Set(Object.keys(schema.shape));
  if (schema instanceof z.ZodPipe) return queryParameterNames(schema.in);
  throw new Error("A route's query schema must be an object schema: its keys are the parameters the route accepts");
}

/** Every route declared on `routes` and the groups mounted on it, in registration order. */
export function declaredRoutes(routes: Pick<OpenAPIHono, 'openAPIRegistry'>): RouteConfig[] {
  return routes.openAPIRegistry.definitions.flatMap((definition) => (definition.type === 'route' ? [definition.route] : []));
}
