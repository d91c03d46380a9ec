import type { RouteConfig } from '@hono/zod-openapi';
import { z } from 'zod';
import type { ErrorCode } from '../../api/errors.js';
import { errorReplyWith } from '../../api/schemas/error-reply-schemas.js';

/** One reply of a route declaration (`createRoute`'s `responses[status]`). */
export type RouteResponse = Exclude<RouteConfig['responses'][string], { $ref: string }>;

/** A request body of a route declaration. */
export type RouteBody = NonNullable<NonNullable<RouteConfig['request']>['body']>;

/** An error reply of a route: its `code`s narrow the error body, so clients can switch on them. */
export interface ErrorSpec {
  codes: [ErrorCode, ...ErrorCode[]];
  description: string;
  headers?: z.ZodObject;
}

// Which declared replies are error replies, and with which codes: the document merges them with
// the errors every route of the kind answers (401, 429, 500…), which a route does not repeat.
const errorSpecs = new WeakMap<RouteResponse, ErrorSpec>();

export function json(schema: z.ZodType): Record<'application/json', { schema: z.ZodType }> {
  return { 'application/json': { schema } };
}

/** A JSON request body; `required: false` for routes that also take their input elsewhere. */
export function jsonBody(schema: z.ZodType, required = true): RouteBody {
  return { required, content: json(schema) };
}

/** A reply header, for `headers: z.object({ Location: header('…') })`. */
export function header(description: string, schema: z.ZodType = z.string()): z.ZodType {
  return schema.meta({ description });
}

export function jsonReply(description: string, schema: z.ZodType, headers?: z.ZodObject): RouteResponse {
  return { description, ...(headers ? { headers } : {}), content: json(schema) };
}

/** An error reply of this route alone, in the `{"error":{code,message,details}}` body. */
export function errorResponse(spec: ErrorSpec): RouteResponse {
  const response: RouteResponse = {
    description: spec.description,
    ...(spec.headers ? { headers: spec.headers } : {}),
    content: json(errorReplyWith(spec.codes)),
  };
  errorSpecs.set(response, spec);
  return response;
}

/** The error spec `errorResponse` declared, or undefined for any other reply. */
export function errorSpecOf(response: RouteResponse): ErrorSpec | undefined {
  return errorSpecs.get(response);
}

export function notFoundResponse(what: string): RouteResponse {
  return errorResponse({ codes: ['not_found'], description: `No such ${what}.` });
}

export const retryAfterHeader = (description = 'Seconds to wait before retrying.') => z.object({ 'Retry-After': header(description, z.number().int().min(1)) });
