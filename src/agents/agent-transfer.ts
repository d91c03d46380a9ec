import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { agentVersions, agents } from '../db/schema/index.js';

/** An agent as an export carries it: its current settings and every version, oldest first. */
export interface ExportedAgent {
  id: string;
  version: number;
  settings: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  versions: Array<{ version: number; settings: Record<string, unknown>; createdAt: string }>;
}

/** The tenant's agents (or the one `agentId` names), by id (the primary key's order), a page at a time. */
export async function* exportAgents(db: Db, tenantId: string, agentId?: string, pageSize = 100): AsyncGenerator<ExportedAgent> {
  let after: string | undefined;
  for (;;) {
    const rows = await db
      .select()
      .from(agents)
      .where(
        and(
          eq(agents.tenantId, tenantId),
          agentId !== undefined ? eq(agents.id, agentId) : undefined,
          after !== undefined ? sql`${agents.id} > ${after}` : undefined,
        ),
      )
      .orderBy(asc(agents.id))
      .limit(pageSize);
    for (const row of rows) {
      const versions = await db
        .select()
        .from(agentVersions)
        .where(and(eq(agentVersions.tenantId, tenantId), eq(agentVersions.agentId, row.id)))
        .orderBy(asc(agentVersions.version));
      yield {
        id: row.id,
        version: row.version,
        settings: row.settings,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
        versions: versions.map((v) => ({ version: v.version, settings: v.settings, createdAt: v.createdAt.toISOString() })),
      };
    }
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * Writes an exported agent with its versions and times, in one transaction; false (nothing
 * written) when the tenant has an agent under that id already. Settings are checked by the caller.
 */
export async function importAgent(db: Db, tenantId: string, agent: ExportedAgent): Promise<boolean> {
  return db.transaction(async (tx) => {
    const inserted = await tx
      .insert(agents)
      .values({
        tenantId,
        id: agent.id,
        version: agent.version,
        settings: agent.settings,
        createdAt: new Date(agent.createdAt),
        updatedAt: new Date(agent.updatedAt),
      })
      .onConflictDoNothing()
      .returning({ id: agents.id });
    if (inserted.length === 0) return false;
    if (agent.versions.length > 0) {
      await tx
        .insert(agentVersions)
        .values(agent.versions.map((v) => ({ tenantId, agentId: agent.id, version: v.version, settings: v.settings, createdAt: new Date(v.createdAt) })))
        .onConflictDoNothing();
    }
    return true;
  });
}
