import { type SQL, and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { memories, memoryHistory } from '../db/schema/index.js';

/** One event of a memory's history as an export carries it: the row as it was written. */
export interface ExportedMemoryEvent {
  memoryId: string;
  event: string;
  content: string | null;
  previousContent: string | null;
  tags: string[];
  previousTags: string[] | null;
  metadata: Record<string, unknown> | null;
  sources: Record<string, unknown>[] | null;
  validFrom: string | null;
  validUntil: string | null;
  expiresAt: string | null;
  status: string | null;
  quarantineReasons: string[] | null;
  actor: Record<string, unknown>;
  at: string;
}

/** A memory as an export carries it: every stored field but its vector and BM25 length, which the importer recomputes. */
export interface ExportedMemory {
  id: string;
  agentId: string;
  /** Null for the agent's shared memories. */
  userId: string | null;
  key: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  sources: Record<string, unknown>[];
  validFrom: string | null;
  validUntil: string | null;
  validTo: string | null;
  expiresAt: string | null;
  /** 'active' | 'quarantined' (the memory firewall's): a quarantined memory stays quarantined when imported. */
  status: string;
  quarantineReasons: string[];
  createdAt: string;
  updatedAt: string;
  /** Every event under the memory's scope and key, oldest first (as `GET /v1/memories/{key}/history` reads them). */
  history: ExportedMemoryEvent[];
}

export interface MemoryExportScope {
  agentId?: string;
  /** Only this user's memories (not the agent's shared ones). */
  userId?: string;
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

/**
 * The tenant's memories in `scope`, in (agent, user, key) order, `pageSize` at a time: each page
 * one index range and one history query, so the export holds a page in memory, never the whole.
 */
export async function* exportMemories(db: Db, tenantId: string, scope: MemoryExportScope, pageSize = 500): AsyncGenerator<ExportedMemory> {
  const inScope = and(
    eq(memories.tenantId, tenantId),
    scope.agentId !== undefined ? eq(memories.agentId, scope.agentId) : undefined,
    scope.userId !== undefined ? eq(memories.userId, scope.userId) : undefined,
  );
  let after: { agentId: string; userId: string; key: string } | undefined;
  for (;;) {
    // The unique index's order (tenant, agent, user, key): each page is one index range, in the
    // database's collation, so the order is the same on every export from one server.
    const afterLast: SQL | undefined = after
      ? sql`(${memories.agentId}, ${memories.userId}, ${memories.key}) > (${after.agentId}, ${after.userId}, ${after.key})`
      : undefined;
    const rows = await db
      .select({
        id: memories.id,
        agentId: memories.agentId,
        userId: memories.userId,
        key: memories.key,
        content: memories.content,
        tags: memories.tags,
        metadata: memories.metadata,
        sources: memories.sources,
        validFrom: memories.validFrom,
        validUntil: memories.validUntil,
        validTo: memories.validTo,
        expiresAt: memories.expiresAt,
        status: memories.status,
        quarantineReasons: memories.quarantineReasons,
        createdAt: memories.createdAt,
        updatedAt: memories.updatedAt,
      })
      .from(memories)
      .where(and(inScope, afterLast))
      .orderBy(asc(memories.agentId), asc(memories.userId), asc(memories.key))
      .limit(pageSize);
    if (rows.length === 0) return;
    const events = await db
      .select()
      .from(memoryHistory)
      .where(
        and(
          eq(memoryHistory.tenantId, tenantId),
          sql`(${memoryHistory.agentId}, ${memoryHistory.userId}, ${memoryHistory.key}) IN (${sql.join(
            rows.map((r) => sql`(${r.agentId}, ${r.userId}, ${r.key})`),
            sql`, `,
          )})`,
        ),
      )
      .orderBy(asc(memoryHistory.id));
    const byScopeKey = new Map<string, ExportedMemoryEvent[]>();
    for (const e of events) {
      const id = JSON.stringify([e.agentId, e.userId, e.key]);
      let list = byScopeKey.get(id);
      if (!list) byScopeKey.set(id, (list = []));
      list.push({
        memoryId: e.memoryId,
        event: e.event,
        content: e.content,
        previousContent: e.previousContent,
        tags: e.tags,
        previousTags: e.previousTags,
        metadata: e.metadata,
        sources: e.sources,
        validFrom: iso(e.validFrom),
        validUntil: iso(e.validUntil),
        expiresAt: iso(e.expiresAt),
        status: e.status,
        quarantineReasons: e.quarantineReasons,
        actor: e.actor,
        at: e.at.toISOString(),
      });
    }
    for (const r of rows) {
      yield {
        id: r.id,
        agentId: r.agentId,
        userId: r.userId === '' ? null : r.userId,
        key: r.key,
        content: r.content,
        tags: r.tags,
        metadata: r.metadata,
        sources: r.sources,
        validFrom: iso(r.validFrom),
        validUntil: iso(r.validUntil),
        validTo: iso(r.validTo),
        expiresAt: iso(r.expiresAt),
        status: r.status,
        quarantineReasons: r.quarantineReasons,
        createdAt: r.createdAt.toISOString(),
        updatedAt: r.updatedAt.toISOString(),
        history: byScopeKey.get(JSON.stringify([r.agentId, r.userId, r.key])) ?? [],
      };
    }
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1]!;
    after = { agentId: last.agentId, userId: last.userId, key: last.key };
  }
}
