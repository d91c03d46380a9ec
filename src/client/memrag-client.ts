import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './api-types.js';

/** The API's request and reply shapes by name, as the OpenAPI document's components declare them. */
export type Schemas = components['schemas'];

export type MemragClient = Client<paths>;

export interface MemragClientOptions {
  /** The server's origin (and path prefix, behind a proxy), e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; leave it out for a keyless loopback server. */
  apiKey?: string;
  /** Another fetch (a test's, a proxy's); the global one otherwise. */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A client of the memrag API typed from its OpenAPI document (openapi-fetch over the types
 * openapi-typescript generated into api-types.ts): paths, parameters, bodies and replies are
 * checked by the compiler. Each call resolves to `{ data }` or `{ error }` (the API's JSON error),
 * with the `response` beside them; it throws only when the request could not be sent.
 */
export function createMemragClient(options: MemragClientOptions): MemragClient {
  return createClient<paths>({
    // Without its trailing slash, or `baseUrl + '/v1/…'` would hold two.
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.apiKey ? { headers: { Authorization: `Bearer ${options.apiKey}` } } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** The JSON body an operation takes, by its operationId: `JsonBody<'searchKnowledge'>`. */
export type JsonBody<Id extends keyof operations> = operations[Id] extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;
