import { and, desc, eq, getTableColumns, lt, sql } from 'drizzle-orm';
import { decodeVersionCursor, encodeVersionCursor } from '../agents/version-cursor.js';
import type { Db } from '../db/database.js';
import { workflowVersions, workflows } from '../db/schema/index.js';
import { afterCursor, createdAtText, keysetPage } from '../retrieval/keyset-page.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { type Workflow, type WorkflowDefinition, type WorkflowVersion, definitionOf, workflowDefinitionSchema } from './workflow-definition.js';
import { WorkflowExistsError, type WorkflowPage, type WorkflowStore } from './workflow-store.js';

const DEFAULT_PAGE = 50;

const { tenantId: _tenantId, ...workflowColumns } = getTableColumns(workflows);
type WorkflowRow = Omit<typeof workflows.$inferSelect, 'tenantId'>;

// Parsed on the way out: a reader gets a definition of today's shape or an error, never a stray field.
const parse = (stored: Record<string, unknown>): WorkflowDefinition => workflowDefinitionSchema.parse(stored);
const toWorkflow = (row: WorkflowRow): Workflow => ({
  ...parse(row.definition),
  id: row.id,
  version: row.version,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});
const toVersion = (row: typeof workflowVersions.$inferSelect): WorkflowVersion => ({
  workflowId: row.workflowId,
  version: row.version,
  definition: parse(row.definition),
  createdAt: row.createdAt,
});
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function createPgWorkflowStore(options: { db: Db; tenantId?: string }): WorkflowStore {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const ofTenant = eq(workflows.tenantId, tenantId);
  const byId = (id: string) => and(ofTenant, eq(workflows.id, id));
  const versionsOf = (id: string) => and(eq(workflowVersions.tenantId, tenantId), eq(workflowVersions.workflowId, id));

  async function create(id: string, definition: WorkflowDefinition): Promise<Workflow> {
    const parsed = workflowDefinitionSchema.parse(definition);
    return db.transaction(async (tx) => {
      const [row] = await tx.insert(workflows).values({ tenantId, id, version: 1, definition: parsed }).onConflictDoNothing().returning(workflowColumns);
      if (!row) throw new WorkflowExistsError(id);
      await tx.insert(workflowVersions).values({ tenantId, workflowId: id, version: 1, definition: parsed });
      return toWorkflow(row);
    });
  }

  async function get(id: string): Promise<Workflow | null> {
    const [row] = await db.select(workflowColumns).from(workflows).where(byId(id));
    return row ? toWorkflow(row) : null;
  }

  async function list(opts: { limit?: number; cursor?: string }): Promise<WorkflowPage<Workflow>> {
    const limit = opts.limit ?? DEFAULT_PAGE;
    const rows = await db
      .select({ ...workflowColumns, createdAtText: createdAtText(workflows) })
      .from(workflows)
      .where(and(ofTenant, afterCursor(opts.cursor, workflows)))
      .orderBy(desc(workflows.createdAt), desc(workflows.id))
      .limit(limit + 1);
    return keysetPage(rows, limit, ({ createdAtText: _t, ...row }) => toWorkflow(row));
  }

  async function update(id: string, change: (current: WorkflowDefinition) => WorkflowDefinition): Promise<Workflow | null> {
    return db.transaction(async (tx) => {
      // Locked, so that concurrent changes take turns: each reads the version the previous one wrote.
      const [row] = await tx.select(workflowColumns).from(workflows).where(byId(id)).for('update');
      if (!row) return null;
      const current = toWorkflow(row);
      const next = workflowDefinitionSchema.parse(change(definitionOf(current)));
      if (sameJson(next, definitionOf(current))) return current;
      const version = row.version + 1;
      const [updated] = await tx.update(workflows).set({ version, definition: next, updatedAt: sql`now()` }).where(byId(id)).returning(workflowColumns);
      await tx.insert(workflowVersions).values({ tenantId, workflowId: id, version, definition: next });
      return toWorkflow(updated!);
    });
  }

  async function del(id: string): Promise<boolean> {
    return db.transaction(async (tx) => {
      const deleted = await tx.delete(workflows).where(byId(id)).returning({ id: workflows.id });
      if (deleted.length === 0) return false;
      await tx.delete(workflowVersions).where(versionsOf(id));
      return true;
    });
  }

  async function versions(id: string, opts: { limit?: number; cursor?: string }): Promise<WorkflowPage<WorkflowVersion> | null> {
    const limit = opts.limit ?? DEFAULT_PAGE;
    const before = opts.cursor === undefined ? undefined : decodeVersionCursor(opts.cursor);
    return db.transaction(
      async (tx) => {
        const [found] = await tx.select({ id: workflows.id }).from(workflows).where(byId(id));
        if (!found) return null;
        const rows = await tx
          .select()
          .from(workflowVersions)
          .where(and(versionsOf(id), before === undefined ? undefined : lt(workflowVersions.version, before)))
          .orderBy(desc(workflowVersions.version))
          .limit(limit + 1);
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        return { items: page.map(toVersion), nextCursor: rows.length > limit && last ? encodeVersionCursor(last.version) : null };
      },
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
  }

  return { create, get, list, update, delete: del, versions };
}
