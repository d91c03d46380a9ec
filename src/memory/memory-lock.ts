import { type SQL, and, sql } from 'drizzle-orm';
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
  await tx.execute(keyLocks(tenantId, keys));
}

/** `lockKeys`'s statement; with `first`, a condition the server evaluates before the first key's lock. */
function keyLocks(tenantId: string, keys: readonly ScopedKey[], first?: SQL): SQL {
  const names = [...new Set(keys.map((k) => JSON.stringify([tenantId, k.agentId, k.userId, k.key])))];
  return sql`SELECT pg_advisory_xact_lock(h) FROM (
      SELECT DISTINCT hashtextextended(name, 1) AS h FROM unnest(${textArray(names)}) AS name ORDER BY 1
    ) keys${first ? sql` WHERE ${first}` : sql``}`;
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

/** How `lockRow` locks. */
export interface LockRowOptions {
  /** The caller took the key already (`lockKeys`). */
  keyTaken?: boolean;
  /** A condition that takes a lock (the corpus's share, `CorpusIndex.firstLock`), evaluated before the key's. */
  first?: SQL | undefined;
}

/**
 * The row under a key, locked for the rest of the transaction (`FOR UPDATE`), with what a write
 * compares; the key is taken first (`lockKeys`), unless the caller took it already, in the same
 * statement: its locks are uncorrelated subqueries, run once before the row is read. The row is
 * read as of the statement's start, before the key was taken, and locking it reads its newest
 * version; a row another writer of the key inserted meanwhile is not seen, and inserting the key
 * again then fails as a conflict (23505), which `CorpusIndex.write` runs again.
 */
export async function lockRow(tx: Tx, tenantId: string, key: string, scope: StoredScope, options: LockRowOptions = {}): Promise<LockedRow | undefined> {
  const locks = options.keyTaken ? options.first : sql`(SELECT count(*) FROM (${keyLocks(tenantId, [{ ...scope, key }], options.first)}) taken) >= 0`;
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
    .where(and(byKey(tenantId, key, scope), locks))
    .for('update');
  return row ? { ...row, expired: Boolean(row.expired) } : undefined;
}
