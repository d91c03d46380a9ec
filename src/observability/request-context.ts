import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  requestId: string;
}

/**
 * The request being served, for code that has no Hono context at hand (stores, the agent loop,
 * background work started by a request): the logger reads it so that every line written while
 * serving a request carries its id, whoever writes it.
 */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
