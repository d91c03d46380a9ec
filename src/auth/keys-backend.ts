import type { AuditActor } from '../audit/audit-types.js';
import { createPgAuditLog } from '../audit/pg-audit-log.js';
import type { Db } from '../db/database.js';
import type { ApiKeyScope } from './api-key-scopes.js';
import { type ApiKeyRecord, type RevokeResult, createApiKey, listApiKeys, revokeApiKey } from './api-key-store.js';

/**
 * Where `npm run keys` makes its changes: the database itself, or a running server's `/v1/keys`
 * (keys-http-backend.ts) when the server holds the embedded store.
 */
export interface KeysBackend {
  create(input: { tenantId: string; name: string; scopes: readonly ApiKeyScope[] }): Promise<ApiKeyRecord & { key: string }>;
  list(): Promise<ApiKeyRecord[]>;
  revoke(idOrPrefix: string): Promise<RevokeResult>;
  /** How soon running servers act on a change, for the confirmation. */
  readonly takesEffect: string;
}

const COMMAND: AuditActor = { type: 'command', command: 'keys' };

/**
 * Changes made on the database, each with its audit entry in the key's tenant, in one
 * transaction. Servers on the same PostgreSQL see them within API_KEY_CACHE_MS.
 */
export function dbKeysBackend(db: Db): KeysBackend {
  const audit = (tenantId: string) => createPgAuditLog({ db, tenantId });
  const details = (key: ApiKeyRecord) => ({ keyId: key.id, prefix: key.prefix, scopes: key.scopes });
  return {
    create: (input) =>
      db.transaction(async (tx) => {
        const created = await createApiKey(tx, input);
        await audit(created.tenantId).record({ action: 'key.created', userId: null, actor: COMMAND, details: details(created) }, tx);
        return created;
      }),
    list: () => listApiKeys(db),
    revoke: (idOrPrefix) =>
      db.transaction(async (tx) => {
        const result = await revokeApiKey(tx, idOrPrefix);
        if (result.status === 'revoked')
          await audit(result.key.tenantId).record({ action: 'key.revoked', userId: null, actor: COMMAND, details: details(result.key) }, tx);
        return result;
      }),
    takesEffect: 'Running servers act on it within API_KEY_CACHE_MS (5 s by default).',
  };
}
