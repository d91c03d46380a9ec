/** A memrag API call that was answered with an error: its HTTP status and the API's error code and message. */
export class MemragApiError extends Error {
  override readonly name = 'MemragApiError';

  constructor(
    readonly operation: string,
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(`memrag ${operation} failed (${status} ${code}): ${detail}`);
  }
}

interface Answered<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a typed client's answer, or a MemragApiError naming the API's error (the body's
 * `{"error":{code,message}}`; a body that is not one, from a proxy say, is named by the status).
 */
export function dataOf<T>(operation: string, answer: Answered<T>): T {
  const { data, error, response } = answer;
  if (data !== undefined && response.ok) return data;
  const body = (error as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const code = typeof body?.code === 'string' ? body.code : 'http_error';
  const message =
    typeof body?.message === 'string' ? body.message : typeof error === 'string' && error ? error.slice(0, 500) : response.statusText || 'no reply body';
  throw new MemragApiError(operation, response.status, code, message);
}
