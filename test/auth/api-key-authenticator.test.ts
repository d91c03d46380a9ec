import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyAuthenticator } from '../../src/auth/api-key-authenticator.js';
import { hashApiKey } from '../../src/auth/api-key-secret.js';
import { createApiKey, revokeApiKey } from '../../src/auth/api-key-store.js';
import { parseEnvApiKeys } from '../../src/auth/env-api-keys.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';

describe('API key authenticator', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({});
  });
  afterAll(() => database.close());

  /** An authenticator on a clock the test moves, counting the queries it sends. */
  function withClock(ttlMs: number, envKeys = parseEnvApiKeys('').keys) {
    let now = 0;
    let queries = 0;
    const db = new Proxy(database.db, {
      get(target, prop, receiver) {
        if (prop === 'select') queries += 1;
        return Reflect.get(target, prop, receiver);
      },
    });
    const auth = createApiKeyAuthenticator({ db, envKeys, cacheTtlMs: ttlMs, now: () => now });
    return { auth, advance: (ms: number) => (now += ms), queries: () => queries };
  }

  it('stores only the hash of a created key', async () => {
    const created = await createApiKey(database.db, { tenantId: 'acme' });
    const rows = await queryRows<Record<string, unknown>>(database.db, sql`SELECT * FROM api_keys WHERE id = ${created.id}`);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(created.key);
    expect(rows[0]).toMatchObject({ key_hash: hashApiKey(created.key), prefix: created.prefix, tenant_id: 'acme' });
  });

  it('trusts a lookup for the cache time: a revoked key works until it ends, then never again', async () => {
    const { auth, advance, queries } = withClock(5_000);
    const created = await createApiKey(database.db, { tenantId: 'acme', name: 'ops' });
    expect(await auth.authenticate(created.key)).toEqual({ tenantId: 'acme', keyId: `key:${created.id}`, name: 'ops', scopes: ['read', 'write', 'admin'] });
    const asked = queries();
    // Concurrent and repeated requests within the cache time share the one lookup.
    await Promise.all([auth.authenticate(created.key), auth.authenticate(created.key)]);
    expect(queries()).toBe(asked);

    await revokeApiKey(database.db, created.id);
    advance(4_999);
    expect(await auth.authenticate(created.key)).not.toBeNull();
    advance(2);
    expect(await auth.authenticate(created.key)).toBeNull();
    advance(60_000);
    expect(await auth.authenticate(created.key)).toBeNull();
  });

  it('caches unknown keys too, and a key created meanwhile works once that ends', async () => {
    const { auth, advance, queries } = withClock(5_000);
    expect(await auth.authenticate('mrk_not-yet')).toBeNull();
    const asked = queries();
    expect(await auth.authenticate('mrk_not-yet')).toBeNull();
    expect(queries()).toBe(asked);
    advance(5_001);
    expect(await auth.authenticate('mrk_not-yet')).toBeNull();
    expect(queries()).toBe(asked + 1);
  });

  it('asks the database every time with a cache time of 0, and never for API_KEYS entries', async () => {
    const { auth, queries } = withClock(0, parseEnvApiKeys('first, beta:second').keys);
    expect(await auth.authenticate('second')).toEqual({ tenantId: 'beta', keyId: 'env:2', scopes: ['read', 'write', 'admin'] });
    expect(await auth.authenticate('first')).toEqual({ tenantId: 'default', keyId: 'env:1', scopes: ['read', 'write', 'admin'] });
    expect(queries()).toBe(0);
    expect(auth.required).toBe(true);
    await auth.authenticate('unknown');
    await auth.authenticate('unknown');
    expect(queries()).toBe(2);
  });

  it('does not keep a failed lookup: the next request asks again', async () => {
    let fail = true;
    const db = new Proxy(database.db, {
      get(target, prop, receiver) {
        if (prop === 'select' && fail) throw new Error('database down');
        return Reflect.get(target, prop, receiver);
      },
    });
    const created = await createApiKey(database.db, { tenantId: 'acme' });
    const auth = createApiKeyAuthenticator({ db, envKeys: [], cacheTtlMs: 60_000 });
    await expect(auth.authenticate(created.key)).rejects.toThrow('database down');
    fail = false;
    expect(await auth.authenticate(created.key)).toMatchObject({ tenantId: 'acme' });
  });

  it('forgets every cached answer when this process changes keys, so a change holds at the next request', async () => {
    const clock = withClock(60_000);
    const created = await createApiKey(database.db, { tenantId: 'acme', scopes: ['read'] });
    expect(await clock.auth.authenticate(created.key)).toMatchObject({ scopes: ['read'] });
    await revokeApiKey(database.db, created.id);
    expect(await clock.auth.authenticate(created.key)).not.toBeNull();
    clock.auth.keysChanged();
    expect(await clock.auth.authenticate(created.key)).toBeNull();
  });

  // Keys stored before scopes existed: the migration's default gives them what they had, everything.
  it('reads a key stored without scopes back with all three', async () => {
    const key = 'mrk_stored-before-scopes-existed';
    await database.db.execute(sql`INSERT INTO api_keys (tenant_id, key_hash, prefix) VALUES ('legacy', ${hashApiKey(key)}, 'mrk_stored')`);
    const auth = createApiKeyAuthenticator({ db: database.db, envKeys: [], cacheTtlMs: 0 });
    expect(await auth.authenticate(key)).toMatchObject({ tenantId: 'legacy', scopes: ['read', 'write', 'admin'] });
  });
});
