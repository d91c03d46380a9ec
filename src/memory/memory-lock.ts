import { sql } from 'drizzle-orm';
import type { Tx } from '../db/database.js';
import { memories } from '../db/schema/index.js';
import { textArray } from '../db/sql-arrays.js';
import { type LockedRow, normalizedText, notExpired } from './memory-rows.js';
import { type StoredScope, byKey } from './memory-scope.js';

/** A key in its scope, as `lockKeys` takes it. */
export type ScopedKey = StoredScope & { key: string };

/**
 * Takes the keys for the rest of the transaction (advisory locks, in one order for every
 * writer), whether or not a row holds them yet: the tenant's writers run side by side, and two
 * saves of the same new key must not both find it free and insert it.
 */
export async function lockKeys(tx: Tx, tenantId: string, keys: readonly ScopedKey[]): Promise<void> {
  if (keys.length === 0) return;
  const names = [...new Set(keys.map((k) => JSON.stringify([tenantId, k.agentId, k.userId, k.key])))];
  await tx.execute(sql`SELECT pg_advisory_xact_lock(h) FROM (
      SELECT DISTINCT hashtextextended(name, 1) AS h FROM unnest(${textArray(names)}) AS name ORDER BY 1
    ) keys`);
}

/**
 * Takes the contents in the scope for the rest of the transaction, as extraction's dedupe compares
 * them (normalised), before it looks for one the scope already holds: two writers adding the same
 * fact at once must not both find it absent and insert it under two keys. Taken in one order for
 * every writer, like `lockKeys`, under another seed so that a content never shares a key's lock.
 */
export async function lockContents(tx: Tx, tenantId: string, scope: StoredScope, contents: readonly string[]): Promise<void> {
  if (contents.length === 0) return;
  const prefix = JSON.stringify([tenantId, scope.agentId, scope.userId]);
  await tx.execute(sql`SELECT pg_advisory_xact_lock(h) FROM (
      SELECT DISTINCT hashtextextended(${prefix}::text || ${normalizedText(sql`content`)}, 2) AS h
      FROM unnest(${textArray([...new Set(contents)])}) AS content ORDER BY 1
    ) contents`);
}

/**
 * The row under a key, locked for the rest of the transaction (`FOR UPDATE`), with what a write
 * compares; the key is taken first (`lockKeys`), unless the caller took it already.
 */
export async function lockRow(tx: Tx, tenantId: string, key: string, scope: StoredScope, keyTaken = false): Promise<LockedRow | undefined> {
  if (!keyTaken) await lockKeys(tx, tenantId, [{ ...scope, key }]);
  const [row] = await tx
    .select({
      id: memories.id,
      content: memories.content,
      tags: memories.tags,
      metadata: memories.metadata,
      sources: memories.sources,
      validFrom: memories.validFrom,
      validUntil: memories.validUntil,
      bm25Length: memories.bm25Length,
      validTo: memories.validTo,
      expiresAt: memories.expiresAt,
      status: memories.status,
      quarantineReasons: memories.quarantineReasons,
      expired: sql<boolean>`NOT ${notExpired}`,
    })
    .from(memories)
    .where(byKey(tenantId, key, scope))
    .for('update');
  return row ? { ...row, expired: Boolean(row.expired) } : undefined;
}
