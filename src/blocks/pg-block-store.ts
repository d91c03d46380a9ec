import { and, asc, desc, eq, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { blockHistory, blocks } from '../db/schema/index.js';
import type { MemoryWriteScreen } from '../memory/memory-write-screen.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { readBlockAsOf } from './block-as-of.js';
import { BLOCK_LIMITS } from './block-fields.js';
import { approveBlockWrite, modelBlockWrite } from './block-model-write.js';
import { blockColumns, blockKey, historyKey, keyOf, recordEvent, toBlock, toEvent } from './block-rows.js';
import { checkSettings, checkValue } from './block-rules.js';
import { instantiateUserTemplates } from './block-templates.js';
import {
  type Block,
  type BlockActor,
  type BlockHistoryPage,
  type BlockHistoryPaging,
  type BlockInput,
  type BlockScope,
  type BlockStore,
  BlockWriteError,
} from './block-types.js';

export interface PgBlockStoreOptions {
  db: Db;
  /** The tenant whose blocks this store reads and writes, and only those. Default `default`. */
  tenantId?: string;
  /** The memory firewall: the model's writes are screened as its memory writes are. */
  screen?: MemoryWriteScreen;
}

/**
 * Takes the scope's lock for the rest of the transaction: without it two puts of new labels,
 * each counting before the other committed, could both pass the scope's cap.
 */
async function lockScope(tx: Db, tenantId: string, scope: BlockScope): Promise<void> {
  const key = `${tenantId}\u001f${keyOf(scope.agentId)}\u001f${keyOf(scope.userId)}`;
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('memrag.blocks.scope'), hashtext(${key}))`);
}

/** A new block past BLOCK_LIMITS.maxPerScope is refused, in the transaction that made it (rolled back with it). */
async function refuseOverfullScope(tx: Db, tenantId: string, scope: BlockScope): Promise<void> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(blocks)
    .where(and(eq(blocks.tenantId, tenantId), eq(blocks.agentId, keyOf(scope.agentId)), eq(blocks.userId, keyOf(scope.userId))));
  if ((row?.n ?? 0) > BLOCK_LIMITS.maxPerScope) {
    throw new BlockWriteError('label', `a scope holds at most ${BLOCK_LIMITS.maxPerScope} blocks: delete one before adding another`);
  }
}

export function createPgBlockStore(options: PgBlockStoreOptions): BlockStore {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const ofTenant = eq(blocks.tenantId, tenantId);

  async function put(label: string, scope: BlockScope, input: BlockInput, actor: BlockActor) {
    const next = {
      ...scope,
      label,
      value: input.value,
      description: input.description ?? null,
      limit: input.limit ?? BLOCK_LIMITS.defaultLimit,
      readOnly: input.readOnly ?? false,
      schema: input.schema ?? null,
    };
    checkSettings(next);
    checkValue(next, next.value, undefined);
    return db.transaction(async (tx) => {
      await lockScope(tx, tenantId, scope);
      const key = { tenantId, agentId: keyOf(scope.agentId), userId: keyOf(scope.userId), label };
      const [inserted] = await tx
        .insert(blocks)
        .values({ ...key, ...blockColumns(next) })
        .onConflictDoNothing()
        .returning();
      if (inserted) await refuseOverfullScope(tx, tenantId, scope);
      const row =
        inserted ??
        (
          await tx
            .update(blocks)
            .set({ ...blockColumns(next), updatedAt: sql`now()` })
            .where(blockKey(tenantId, label, scope))
            .returning()
        )[0]!;
      await recordEvent(tx, tenantId, next, 'written', actor);
      return { block: toBlock(row), created: inserted !== undefined };
    });
  }

  async function get(label: string, scope: BlockScope, asOf?: Date): Promise<Block | null> {
    if (asOf) return readBlockAsOf(db, tenantId, label, scope, asOf);
    const [row] = await db
      .select()
      .from(blocks)
      .where(blockKey(tenantId, label, scope));
    return row ? toBlock(row) : null;
  }

  async function list(scope: BlockScope): Promise<Block[]> {
    const rows = await db
      .select()
      .from(blocks)
      .where(and(ofTenant, eq(blocks.agentId, keyOf(scope.agentId)), eq(blocks.userId, keyOf(scope.userId))))
      .orderBy(asc(blocks.label));
    return rows.map(toBlock);
  }

  async function del(label: string, scope: BlockScope, actor: BlockActor): Promise<boolean> {
    return db.transaction(async (tx) => {
      const gone = await tx
        .delete(blocks)
        .where(blockKey(tenantId, label, scope))
        .returning({ label: blocks.label });
      if (gone.length === 0) return false;
      await recordEvent(tx, tenantId, { ...scope, label }, 'deleted', actor);
      return true;
    });
  }

  async function history(label: string, scope: BlockScope, page: BlockHistoryPaging = {}): Promise<BlockHistoryPage> {
    const limit = Math.min(Math.max(1, page.limit ?? BLOCK_LIMITS.historyPage), BLOCK_LIMITS.historyPageMax);
    // The newest first, one more than the page, to know whether an older page is left.
    const rows = await db
      .select()
      .from(blockHistory)
      .where(and(historyKey(tenantId, label, scope), page.before === undefined ? undefined : lt(blockHistory.id, page.before)))
      .orderBy(desc(blockHistory.id))
      .limit(limit + 1);
    const events = rows.slice(0, limit).reverse().map(toEvent);
    return { events, nextBefore: rows.length > limit ? events[0]!.id : null };
  }

  async function visible(agentId: string, userId: string | null): Promise<Block[]> {
    const agentOnly = and(eq(blocks.agentId, agentId), eq(blocks.userId, ''));
    const scopes = userId
      ? or(agentOnly, and(eq(blocks.agentId, ''), eq(blocks.userId, userId)), and(eq(blocks.agentId, agentId), eq(blocks.userId, userId)))
      : agentOnly;
    // The order the prompt shows them in: the agent's, the user's, the agent's view of the user.
    const rank = sql`CASE WHEN ${blocks.userId} = '' THEN 0 WHEN ${blocks.agentId} = '' THEN 1 ELSE 2 END`;
    const rows = await db.select().from(blocks).where(and(ofTenant, scopes)).orderBy(rank, asc(blocks.label));
    return rows.map(toBlock);
  }

  const parts = { db, tenantId, screen: options.screen };
  return {
    put,
    get,
    list,
    delete: del,
    history,
    visible,
    modelWrite: (write) => modelBlockWrite(parts, write),
    approve: (label, eventId, scope) => approveBlockWrite(parts, label, eventId, scope),
    instantiateUserTemplates: (agentId, userId, templates) => instantiateUserTemplates(db, tenantId, agentId, userId, templates),
  };
}
