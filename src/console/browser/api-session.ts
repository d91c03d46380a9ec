import { createMemragClient, type MemragClient } from '../../client/memrag-client.js';

const KEY_STORAGE = 'memrag.apiKey';

/** Where the console talks to the API, and with which key. */
export interface ApiSession {
  client: MemragClient;
  baseUrl: string;
  apiKey?: string;
}

/** The API's base: the page's folder, so that a proxy's path prefix in front of `/console` is kept. */
export function apiBaseUrl(): string {
  return new URL('.', location.href).href.replace(/\/$/, '');
}

export function sessionFor(apiKey?: string): ApiSession {
  const baseUrl = apiBaseUrl();
  return { client: createMemragClient({ baseUrl, ...(apiKey ? { apiKey } : {}) }), baseUrl, ...(apiKey ? { apiKey } : {}) };
}

/** The key of this tab's session: sessionStorage, so that it goes with the tab rather than staying on the machine. */
export function storedApiKey(): string | undefined {
  return sessionStorage.getItem(KEY_STORAGE) ?? undefined;
}

export function storeApiKey(key: string): void {
  sessionStorage.setItem(KEY_STORAGE, key);
}

export function forgetApiKey(): void {
  sessionStorage.removeItem(KEY_STORAGE);
}

/** Whether the server wants a key (see console-routes.ts); a keyless loopback server opens directly. */
export async function serverWantsKey(): Promise<boolean> {
  const { data, error, response } = await sessionFor().client.GET('/console/server.json');
  if (error || !data) throw new Error(`console/server.json answered ${response.status}`);
  return data.apiKeys;
}

/** Tries the session with a cheap call: undefined when it works, else the error to show. */
export async function checkSession(session: ApiSession): Promise<string | undefined> {
  const { error, response } = await session.client.GET('/v1/tags');
  return error ? describeError(error, response) : undefined;
}

/** An API error as people read it: the status, the code, the message and each rejected field. */
export function describeError(error: unknown, response?: { status: number }): string {
  const status = response ? `${response.status} ` : '';
  const body = (error as { error?: { code?: string; message?: string; details?: { path?: string; message?: string }[] | null } } | undefined)?.error;
  if (!body) return `${status}${error instanceof Error ? error.message : String(error)}`.trim();
  const fields = (body.details ?? []).map((d) => `${d.path ?? ''}: ${d.message ?? ''}`).join('; ');
  return `${status}${body.code ?? 'error'}: ${body.message ?? ''}${fields ? ` (${fields})` : ''}`;
}
