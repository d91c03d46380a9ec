import { z } from 'zod';
import { API_KEY_SCOPES, storedScopes } from './api-key-scopes.js';
import type { ApiKeyRecord, RevokeResult } from './api-key-store.js';
import type { KeysBackend } from './keys-backend.js';

/** A refusal or failure of the server that the operator can act on; its message says which. */
export class KeysServerError extends Error {
  override name = 'KeysServerError';
}

export interface KeysHttpBackendOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** An admin key of the tenant; none on a server running without keys. */
  apiKey?: string | undefined;
  fetch?: typeof fetch;
}

const recordSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()).transform(storedScopes),
  createdAt: z.coerce.date(),
  revokedAt: z.coerce.date().nullable(),
});
const createdSchema = z.object({ key: z.string(), apiKey: recordSchema });
const listSchema = z.object({ items: z.array(recordSchema) });
const errorSchema = z.object({ error: z.object({ message: z.string() }) });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The keys of a running server, through its `/v1/keys`: the only safe way while it holds the
 * embedded store, and a change holds there from its next request. Listing and revoking reach the
 * admin key's own tenant; on a server without keys, creating reaches any tenant.
 */
export function keysHttpBackend(options: KeysHttpBackendOptions): KeysBackend {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');

  async function call<T>(method: string, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await doFetch(`${base}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
    } catch (err) {
      throw new KeysServerError(`Cannot reach the memrag server at ${base} (${(err as Error).message}): check MEMRAG_URL.`);
    }
    const payload: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const message = errorSchema.safeParse(payload).data?.error.message ?? `HTTP ${res.status}`;
      const hint =
        res.status === 401
          ? ` The server requires keys: set MEMRAG_API_KEY to an admin key of the tenant (\`--scopes ${API_KEY_SCOPES.join(',')}\`).`
          : res.status === 403
            ? ' Use an admin key of that tenant (MEMRAG_API_KEY).'
            : '';
      throw new KeysServerError(`${base} answered ${res.status}: ${message}${hint}`);
    }
    const parsed = schema.safeParse(payload);
    if (!parsed.success) throw new KeysServerError(`${base}${path} did not answer as a memrag server does: is MEMRAG_URL right?`);
    return parsed.data;
  }

  async function list(): Promise<ApiKeyRecord[]> {
    return (await call('GET', '/v1/keys', listSchema)).items;
  }

  return {
    async create(input) {
      const { key, apiKey } = await call('POST', '/v1/keys', createdSchema, { tenantId: input.tenantId, name: input.name, scopes: input.scopes });
      return { ...apiKey, key };
    },
    list,
    async revoke(idOrPrefix): Promise<RevokeResult> {
      const matches = (await list()).filter(
        (k) => (UUID.test(idOrPrefix) && k.id.toLowerCase() === idOrPrefix.toLowerCase()) || k.prefix.startsWith(idOrPrefix),
      );
      if (matches.length === 0) return { status: 'not_found' };
      if (matches.length > 1) return { status: 'ambiguous', matches };
      const [match] = matches as [ApiKeyRecord];
      if (match.revokedAt !== null) return { status: 'already_revoked', key: match };
      return { status: 'revoked', key: await call('DELETE', `/v1/keys/${match.id}`, recordSchema) };
    },
    takesEffect: `The server at ${base} acts on it from its next request.`,
  };
}
