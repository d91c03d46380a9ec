import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { workflowVersions, workflows } from '../db/schema/index.js';
import { workflowDefinitionSchema } from './workflow-definition.js';

/** A workflow as an export carries it: its current definition and every version, oldest first. */
export interface ExportedWorkflow {
  id: string;
  version: number;
  definition: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  versions: Array<{ version: number; definition: Record<string, unknown>; createdAt: string }>;
}

/** The tenant's workflows, by id (the primary key's order), a page at a time. */
export async function* exportWorkflows(db: Db, tenantId: string, pageSize = 100): AsyncGenerator<ExportedWorkflow> {
  let after: string | undefined;
  for (;;) {
    const rows = await db
      .select()
      .from(workflows)
      .where(and(eq(workflows.tenantId, tenantId), after !== undefined ? sql`${workflows.id} > ${after}` : undefined))
      .orderBy(asc(workflows.id))
      .limit(pageSize);
    for (const row of rows) {
      const versions = await db
        .select()
        .from(workflowVersions)
        .where(and(eq(workflowVersions.tenantId, tenantId), eq(workflowVersions.workflowId, row.id)))
        .orderBy(asc(workflowVersions.version));
      yield {
        id: row.id,
        version: row.version,
        definition: row.definition,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
        versions: versions.map((v) => ({ version: v.version, definition: v.definition, createdAt: v.createdAt.toISOString() })),
      };
    }
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * Writes an exported workflow with its versions and times, in one transaction, each definition
 * checked as a new one would be (a bad one throws, nothing written); false when the tenant has a
 * workflow under that id already.
 */
export async function importWorkflow(db: Db, tenantId: string, workflow: ExportedWorkflow): Promise<boolean> {
  const definition = workflowDefinitionSchema.parse(workflow.definition);
  const versions = workflow.versions.map((v) => ({ ...v, definition: workflowDefinitionSchema.parse(v.definition) }));
  return db.transaction(async (tx) => {
    const inserted = await tx
      .insert(workflows)
      .values({
        tenantId,
        id: workflow.id,
        version: workflow.version,
        definition,
        createdAt: new Date(workflow.createdAt),
        updatedAt: new Date(workflow.updatedAt),
      })
      .onConflictDoNothing()
      .returning({ id: workflows.id });
    if (inserted.length === 0) return false;
    if (versions.length > 0) {
      await tx
        .insert(workflowVersions)
        .values(versions.map((v) => ({ tenantId, workflowId: workflow.id, version: v.version, definition: v.definition, createdAt: new Date(v.createdAt) })))
        .onConflictDoNothing();
    }
    return true;
  });
}
