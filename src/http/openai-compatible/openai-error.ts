import type { MiddlewareHandler } from 'hono';
import type { ErrorBody } from '../../api/errors.js';

/** The routes that answer as OpenAI does, errors included. */
export const OPENAI_COMPATIBLE_PATHS = ['/v1/chat/completions', '/v1/models', '/v1/models/*'] as const;

export function isOpenAiCompatiblePath(path: string): boolean {
  return path === '/v1/chat/completions' || path === '/v1/models' || path.startsWith('/v1/models/');
}

/** An error as OpenAI answers it: `{error: {message, type, param, code}}`, `param` naming the field. */
export function openAiErrorOf(status: number, body: ErrorBody) {
  const { code, message, details } = body.error;
  return {
    error: {
      message,
      type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error',
      param: details?.[0]?.path || null,
      code: status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limit_exceeded' : code,
    },
  };
}

/**
 * Answers the OpenAI-compatible routes' errors in OpenAI's shape, whoever raised them (the key
 * check, the rate limit, the body limit, validation, the route): OpenAI clients read `error.message`
 * and `error.code` from there.
 */
export const openAiErrorShape: MiddlewareHandler = async (c, next) => {
  await next();
  const res = c.res;
  if (res.status < 400 || !(res.headers.get('content-type') ?? '').includes('application/json')) return;
  const body = (await res.clone().json()) as Partial<ErrorBody> & { error?: { type?: unknown } };
  if (!body.error || typeof body.error.code !== 'string' || body.error.type !== undefined) return;
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  // Unset first: assigning over a reply copies its headers into the new one.
  c.res = undefined;
  c.res = new Response(JSON.stringify(openAiErrorOf(res.status, body as ErrorBody)), { status: res.status, headers });
};
