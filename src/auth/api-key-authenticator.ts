import type { Db } from '../db/database.js';
import { hashApiKey } from './api-key-secret.js';
import { ALL_SCOPES, type ApiKeyScope } from './api-key-scopes.js';
import { anyApiKeyStored, findActiveApiKey } from './api-key-store.js';
import type { EnvApiKey } from './env-api-keys.js';

/** Who a request's key says it is. */
export interface ApiKeyIdentity {
  tenantId: string;
  /** Names the key without revealing it (`env:1`, `key:<uuid>`): the rate limiter's bucket. */
  keyId: string;
  /** A stored key's name (`npm run keys -- create --name`); `API_KEYS` entries have none. */
  name?: string;
  /** What the key may do; `API_KEYS` entries have every scope. */
  scopes: readonly ApiKeyScope[];
}

export interface ApiKeyAuthenticator {
  /**
   * The identity of a valid, unrevoked key, or null. Lookups are by the key's hash, and their
   * answer (found or not) is trusted for the cache time: a revoked key stops working, and a
   * created one starts, within that time.
   */
  authenticate(key: string): Promise<ApiKeyIdentity | null>;
  /**
   * Whether `/v1` needs a key: when `API_KEYS` has any, or the `api_keys` table has ever held one
   * (checked again after the cache time while it has none). Once true it stays true: deleting or
   * revoking keys never opens the API of a running server.
   */
  isRequired(): Promise<boolean>;
  /** The last answer of `isRequired`, for what cannot wait (the OpenAPI document). */
  readonly required: boolean;
  /**
   * This process stored or revoked a key (`/v1/keys`): forgets every cached answer, so that the
   * change holds from the next request here; other processes see it within the cache time.
   */
  keysChanged(): void;
}

export interface ApiKeyAuthenticatorOptions {
  db: Db;
  envKeys: readonly EnvApiKey[];
  /** How long a lookup's answer is trusted. 0: every request asks the database. */
  cacheTtlMs: number;
  now?: () => number;
}

// Distinct keys remembered at most; past it the oldest answers are dropped (they are only a cache).
const CACHE_MAX_ENTRIES = 10_000;

export function createApiKeyAuthenticator(options: ApiKeyAuthenticatorOptions): ApiKeyAuthenticator {
  const { db, cacheTtlMs } = options;
  const now = options.now ?? (() => performance.now());
  const envByHash = new Map(options.envKeys.map((k, i) => [k.keyHash, { tenantId: k.tenantId, keyId: `env:${i + 1}`, scopes: ALL_SCOPES }]));
  // Promises, so that concurrent requests with one uncached key share one query.
  const lookups = new Map<string, { answer: Promise<ApiKeyIdentity | null>; expires: number }>();
  let required = envByHash.size > 0;
  let requiredCheck: { answer: Promise<boolean>; expires: number } | undefined;

  function authenticate(key: string): Promise<ApiKeyIdentity | null> {
    const keyHash = hashApiKey(key);
    const fromEnv = envByHash.get(keyHash);
    if (fromEnv) return Promise.resolve(fromEnv);
    const at = now();
    const cached = lookups.get(keyHash);
    if (cached && cached.expires > at) return cached.answer;
    if (cached) lookups.delete(keyHash);
    const answer = findActiveApiKey(db, keyHash).then((row) =>
      row ? { tenantId: row.tenantId, keyId: `key:${row.id}`, name: row.name, scopes: row.scopes } : null,
    );
    // A failed lookup (database down) is not an answer: the next request asks again.
    answer.catch(() => lookups.delete(keyHash));
    if (cacheTtlMs > 0) {
      if (lookups.size >= CACHE_MAX_ENTRIES) lookups.delete(lookups.keys().next().value!);
      lookups.set(keyHash, { answer, expires: at + cacheTtlMs });
    }
    return answer;
  }

  async function isRequired(): Promise<boolean> {
    if (required) return true;
    const at = now();
    if (!requiredCheck || requiredCheck.expires <= at) {
      const answer = anyApiKeyStored(db);
      requiredCheck = { answer, expires: at + cacheTtlMs };
      answer.catch(() => (requiredCheck = undefined));
    }
    if (await requiredCheck.answer) required = true;
    return required;
  }

  function keysChanged(): void {
    lookups.clear();
    requiredCheck = undefined;
  }

  return {
    authenticate,
    isRequired,
    keysChanged,
    get required() {
      return required;
    },
  };
}
