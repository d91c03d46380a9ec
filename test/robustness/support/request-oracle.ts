import { Hono } from 'hono';
import type { z } from 'zod';
import type { DeclaredOperation } from '../../http/openapi/declared-operations.js';
import { TAG_LIST_PARAMS } from '../../../src/api/schemas/memory-schemas.js';
import { queryObject } from '../../../src/http/validate.js';

/** What the oracle could tell about a request; `unknown` where the route has no schema for that part. */
export interface Verdict {
  /** The request reaches this route at all (a mutated path may reach another one, or none). */
  routed: boolean;
  invalid: string[];
}

/**
 * Whether a request is one the route must refuse, judged by the schemas the OpenAPI document
 * gives for it (the ones the route validates with), over the path parameters and query object
 * as Hono and `queryObject` produce them for the real app. The request's other checks (agent id
 * clashes, "body or query, not both") are not modelled: a request the oracle passes may still be
 * refused, but one it fails must be.
 */
export function createRequestOracle(method: string, pattern: string, operation: DeclaredOperation | undefined) {
  const shape = (operation?.query as z.ZodObject | undefined)?.shape ?? {};
  const lists = TAG_LIST_PARAMS.filter((name) => name in shape);
  const probe = new Hono();
  probe.on(method, pattern, (c) => c.json({ params: c.req.param(), query: queryObject(c, { lists }), names: Object.keys(c.req.queries()) }));
  const bodySchema = operation?.body?.content['application/json'];

  /** `body`: none sent, one the oracle cannot judge (a multipart upload), or what JSON.parse made of it. */
  return async function judge(url: string, body: 'none' | 'opaque' | { ok: true; value: unknown } | { ok: false }): Promise<Verdict> {
    const res = await probe.request(url, { method });
    if (res.status !== 200) return { routed: false, invalid: [] };
    const { params, query, names } = (await res.json()) as { params: Record<string, string>; query: Record<string, unknown>; names: string[] };
    const invalid: string[] = [];
    if (operation?.params && !operation.params.safeParse(params).success) invalid.push('params');
    if (operation?.query && !operation.query.safeParse(query).success) invalid.push('query');
    // Every route refuses a parameter it does not declare, even empty (see defineRoute).
    else if (operation && names.some((name) => !Object.hasOwn(shape, name))) invalid.push('query (unknown parameter)');
    if (operation?.body && body !== 'opaque') {
      if (body === 'none') {
        if (operation.body.required) invalid.push('body (missing)');
      } else if (!body.ok) invalid.push('body (not JSON)');
      else if (bodySchema && !bodySchema.safeParse(body.value).success) invalid.push('body');
    }
    return { routed: true, invalid };
  };
}
