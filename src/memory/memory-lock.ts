import { sql } from 'drizzle-orm';
import type { Tx } from '../db/database.js';
import { memories } from '../db/schema/index.js';
import { type LockedRow, notExpired } from './memory-rows.js';
import { type StoredScope, byKey } from './memory-scope.js';

/** The row under a key, locked for the rest of the transaction (`FOR UPDATE`), with what a write compares. */
export async function lockRow(tx: Tx, tenantId: string, key: string, scope: StoredScope): Promise<LockedRow | undefined> {
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
