import type { RouteConfig } from '@hono/zod-openapi';
import type { z } from 'zod';
import { declaredRoutes } from '../../../src/http/openapi/define-route.js';

/** A route's declaration as tests look things up in it: Hono's path, and the zod schemas by media type. */
export interface DeclaredOperation {
  method: RouteConfig['method'];
  /** Hono's pattern, as registered on the app: `/v1/memories/:key`. */
  path: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: { required: boolean; content: Record<string, z.ZodType> };
  responses: Record<number, { content?: Record<string, z.ZodType> }>;
}

/** Every route the app declares (see src/http/openapi/define-route.ts). */
export function declaredOperations(app: Parameters<typeof declaredRoutes>[0]): DeclaredOperation[] {
  return declaredRoutes(app).map((route) => {
    const body = route.request?.body;
    return {
      method: route.method,
      path: route.path.replace(/\{(\w+)\}/g, ':$1'),
      ...(route.request?.params ? { params: route.request.params } : {}),
      ...(route.request?.query ? { query: route.request.query } : {}),
      ...(body ? { body: { required: body.required ?? false, content: schemasOf(body.content) } } : {}),
      responses: Object.fromEntries(
        Object.entries(route.responses).map(([status, reply]) => [
          Number(status),
          'content' in reply && reply.content ? { content: schemasOf(reply.content) } : {},
        ]),
      ),
    };
  });
}

function schemasOf(content: Record<string, unknown>): Record<string, z.ZodType> {
  return Object.fromEntries(Object.entries(content).map(([mediaType, media]) => [mediaType, (media as { schema: z.ZodType }).schema]));
}
