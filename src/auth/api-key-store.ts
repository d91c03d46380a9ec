import { and, desc, eq, isNull, like, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { apiKeys } from '../db/schema/index.js';
import { generateApiKey, hashApiKey } from './api-key-secret.js';
import { ALL_SCOPES, type ApiKeyScope, normalizeScopes, storedScopes } from './api-key-scopes.js';

/** A stored key as listings show it: never its hash. */
export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  name: string;
  prefix: string;
  scopes: ApiKeyScope[];
  createdAt: Date;
  revokedAt: Date | null;
}

const recordColumns = {
  id: apiKeys.id,
  tenantId: apiKeys.tenantId,
  name: apiKeys.name,
  prefix: apiKeys.prefix,
  scopes: apiKeys.scopes,
  createdAt: apiKeys.createdAt,
  revokedAt: apiKeys.revokedAt,
};

const asRecord = <T extends { scopes: string[] }>(row: T): T & { scopes: ApiKeyScope[] } => ({ ...row, scopes: storedScopes(row.scopes) });

/**
 * Stores a new key for `tenantId`; the returned `key` is the only time it exists in clear. Without
 * `scopes` it gets all three, as the column's default gives keys stored before scopes existed;
 * the CLI and `POST /v1/keys` choose their own default (`DEFAULT_NEW_KEY_SCOPES`).
 */
export async function createApiKey(
  db: Db,
  input: { tenantId: string; name?: string; scopes?: readonly ApiKeyScope[] },
): Promise<ApiKeyRecord & { key: string }> {
  const { key, prefix } = generateApiKey();
  const [row] = await db
    .insert(apiKeys)
    .values({ tenantId: input.tenantId, name: input.name ?? '', keyHash: hashApiKey(key), prefix, scopes: normalizeScopes(input.scopes ?? ALL_SCOPES) })
    .returning(recordColumns);
  return { ...asRecord(row!), key };
}

/** Every stored key (or one tenant's), revoked ones included, newest first. */
export async function listApiKeys(db: Db, options: { tenantId?: string } = {}): Promise<ApiKeyRecord[]> {
  const rows = await db
    .select(recordColumns)
    .from(apiKeys)
    .where(options.tenantId === undefined ? undefined : eq(apiKeys.tenantId, options.tenantId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
  return rows.map(asRecord);
}

export type RevokeResult =
  | { status: 'revoked' | 'already_revoked'; key: ApiKeyRecord }
  | { status: 'not_found' }
  /** A prefix shared by several keys: none is revoked, the caller must name one by id. */
  | { status: 'ambiguous'; matches: ApiKeyRecord[] };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Revokes the key with this id, or the one key whose prefix starts with `idOrPrefix`; with
 * `tenantId`, only among that tenant's keys (another tenant's key is `not_found`).
 */
export async function revokeApiKey(db: Db, idOrPrefix: string, options: { tenantId?: string } = {}): Promise<RevokeResult> {
  return db.transaction(async (tx) => {
    const escaped = idOrPrefix.replace(/[\\%_]/g, (c) => `\\${c}`);
    const byPrefix = like(apiKeys.prefix, `${escaped}%`);
    const matches = await tx
      .select(recordColumns)
      .from(apiKeys)
      .where(
        and(
          UUID.test(idOrPrefix) ? or(eq(apiKeys.id, idOrPrefix), byPrefix) : byPrefix,
          options.tenantId === undefined ? undefined : eq(apiKeys.tenantId, options.tenantId),
        ),
      )
      .for('update')
      .then((rows) => rows.map(asRecord));
    if (matches.length === 0) return { status: 'not_found' as const };
    if (matches.length > 1) return { status: 'ambiguous' as const, matches };
    const [match] = matches as [ApiKeyRecord];
    if (match.revokedAt !== null) return { status: 'already_revoked' as const, key: match };
    const [revoked] = await tx
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiKeys.id, match.id), isNull(apiKeys.revokedAt)))
      .returning(recordColumns);
    return { status: 'revoked' as const, key: asRecord(revoked!) };
  });
}

/** The tenant (and the key's id, name and scopes) of the unrevoked key with this hash, or null. */
export async function findActiveApiKey(db: Db, keyHash: string): Promise<{ id: string; tenantId: string; name: string; scopes: ApiKeyScope[] } | null> {
  const [row] = await db
    .select({ id: apiKeys.id, tenantId: apiKeys.tenantId, name: apiKeys.name, scopes: apiKeys.scopes })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)));
  return row ? asRecord(row) : null;
}

/**
 * Whether any key was ever stored, revoked ones included: once keys are in use, revoking the last
 * one must lock the API, never open it.
 */
export async function anyApiKeyStored(db: Db): Promise<boolean> {
  const [row] = await db.select({ id: apiKeys.id }).from(apiKeys).limit(1);
  return row !== undefined;
}
