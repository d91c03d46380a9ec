import { and, desc, eq, getTableColumns, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { agentVersions, agents } from '../db/schema/index.js';
import { afterCursor, createdAtText, keysetPage } from '../retrieval/keyset-page.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { type Agent, type AgentSettings, type AgentVersion, agentSettingsSchema, settingsOf } from './agent-config.js';
import { applyAgentPatch, sameSettings } from './agent-patch.js';
import { AgentExistsError, type AgentPage, type AgentPatch, type AgentStore, type AgentUpdateOptions } from './agent-store.js';
import { decodeVersionCursor, encodeVersionCursor } from './version-cursor.js';
import { deleteAgentBlocks } from '../blocks/block-erasure.js';
import { syncAgentTemplates } from '../blocks/block-templates.js';

export interface PgAgentStoreOptions {
  db: Db;
  /** The tenant whose agents this store reads and writes, and only those. Default `default`. */
  tenantId?: string;
}

const DEFAULT_PAGE = 50;
const MAX_VERSION = 2_147_483_647;

const { tenantId: _tenantId, ...agentColumns } = getTableColumns(agents);
type AgentRow = Omit<typeof agents.$inferSelect, 'tenantId'>;

// Parsed on the way out: a reader gets settings of today's shape or an error, never a stray field.
const parseSettings = (stored: Record<string, unknown>): AgentSettings => agentSettingsSchema.parse(stored);

const toAgent = (row: AgentRow): Agent => ({
  ...parseSettings(row.settings),
  id: row.id,
  version: row.version,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

// Postgres text holds anything but NUL; the cursor's id only has to reach the comparison intact.
const isStorableId = (id: string) => id.length > 0 && id.length <= 1_000 && !id.includes('\u0000');

export function createPgAgentStore(options: PgAgentStoreOptions): AgentStore {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const ofTenant = eq(agents.tenantId, tenantId);
  const byId = (id: string) => and(ofTenant, eq(agents.id, id));
  const versionsOf = (id: string) => and(eq(agentVersions.tenantId, tenantId), eq(agentVersions.agentId, id));

  async function create(id: string, settings: AgentSettings): Promise<Agent> {
    const parsed = agentSettingsSchema.parse(settings);
    return db.transaction(async (tx) => {
      const [row] = await tx.insert(agents).values({ tenantId, id, version: 1, settings: parsed }).onConflictDoNothing().returning(agentColumns);
      if (!row) throw new AgentExistsError(id);
      // now() is the transaction's start: the version's time is the agent's.
      await tx.insert(agentVersions).values({ tenantId, agentId: id, version: 1, settings: parsed });
      // The agent-scope templates' blocks are made with the agent, in its transaction.
      await syncAgentTemplates(tx, tenantId, id, 1, parsed.blocks, undefined);
      return toAgent(row);
    });
  }

  async function get(id: string): Promise<Agent | null> {
    const [row] = await db.select(agentColumns).from(agents).where(byId(id));
    return row ? toAgent(row) : null;
  }

  async function list(opts: { limit?: number; cursor?: string }): Promise<AgentPage<Agent>> {
    const limit = opts.limit ?? DEFAULT_PAGE;
    const rows = await db
      .select({ ...agentColumns, createdAtText: createdAtText(agents) })
      .from(agents)
      .where(and(ofTenant, afterCursor(opts.cursor, agents, { isId: isStorableId })))
      .orderBy(desc(agents.createdAt), desc(agents.id))
      .limit(limit + 1);
    return keysetPage(rows, limit, ({ createdAtText: _t, ...row }) => toAgent(row));
  }

  async function update(id: string, patch: AgentPatch, updateOptions: AgentUpdateOptions = {}): Promise<Agent | null> {
    return db.transaction(async (tx) => {
      // Locked, so that concurrent updates take turns: each reads the version the previous one wrote.
      const [row] = await tx.select(agentColumns).from(agents).where(byId(id)).for('update');
      if (!row) return null;
      const current = toAgent(row);
      const currentSettings = settingsOf(current);
      const next = applyAgentPatch(currentSettings, patch);
      updateOptions.check?.(next, current);
      if (sameSettings(next, currentSettings)) return current;
      const version = row.version + 1;
      const [updated] = await tx.update(agents).set({ version, settings: next, updatedAt: sql`now()` }).where(byId(id)).returning(agentColumns);
      await tx.insert(agentVersions).values({ tenantId, agentId: id, version, settings: next });
      await syncAgentTemplates(tx, tenantId, id, version, next.blocks, currentSettings.blocks);
      return toAgent(updated!);
    });
  }

  async function del(id: string): Promise<boolean> {
    return db.transaction(async (tx) => {
      // The agent first: it waits for an update holding the row, and the versions statement after
      // it then sees the version that update wrote.
      const deleted = await tx.delete(agents).where(byId(id)).returning({ id: agents.id });
      if (deleted.length === 0) return false;
      await tx.delete(agentVersions).where(versionsOf(id));
      // Its working memory goes with it: its own blocks and its views of its users.
      await deleteAgentBlocks(tx, tenantId, id);
      return true;
    });
  }

  async function versions(id: string, opts: { limit?: number; cursor?: string }): Promise<AgentPage<AgentVersion> | null> {
    const limit = opts.limit ?? DEFAULT_PAGE;
    const before = opts.cursor === undefined ? undefined : decodeVersionCursor(opts.cursor);
    // One snapshot: a deletion between the two reads would otherwise show as an empty page.
    return db.transaction(
      async (tx) => {
        const [agent] = await tx.select({ id: agents.id }).from(agents).where(byId(id));
        if (!agent) return null;
        const rows = await tx
          .select()
          .from(agentVersions)
          .where(and(versionsOf(id), before === undefined ? undefined : lt(agentVersions.version, before)))
          .orderBy(desc(agentVersions.version))
          .limit(limit + 1);
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        return { items: page.map(toVersion), nextCursor: rows.length > limit && last ? encodeVersionCursor(last.version) : null };
      },
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
  }

  async function getVersion(id: string, version: number): Promise<AgentVersion | null> {
    // The column is an int4: a number past it names no version, rather than failing the statement.
    if (!Number.isSafeInteger(version) || version < 1 || version > MAX_VERSION) return null;
    const [row] = await db
      .select()
      .from(agentVersions)
      .where(and(versionsOf(id), eq(agentVersions.version, version)));
    return row ? toVersion(row) : null;
  }

  return { create, get, list, update, delete: del, versions, getVersion };
}

function toVersion(row: typeof agentVersions.$inferSelect): AgentVersion {
  return { agentId: row.agentId, version: row.version, settings: parseSettings(row.settings), createdAt: row.createdAt };
}
