import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { blockHistory, blocks } from '../db/schema/index.js';
import { BLOCK_LIMITS, type BlockTemplate } from './block-fields.js';
import { blockColumns, blockKey, recordEvent } from './block-rows.js';

const fieldsOf = (template: BlockTemplate) => ({
  value: template.value ?? '',
  description: template.description ?? null,
  limit: template.limit ?? BLOCK_LIMITS.defaultLimit,
  readOnly: template.readOnly ?? false,
  schema: template.schema ?? null,
});

const sameTemplate = (a: BlockTemplate | undefined, b: BlockTemplate) => a !== undefined && JSON.stringify(fieldsOf(a)) === JSON.stringify(fieldsOf(b));

/**
 * The user's (A, U) blocks of the agent's user-scope templates, made on the user's first turn with
 * the agent: only labels the user never had there (no history), so a block the user or the model
 * deleted is not brought back. One read when they all exist, which is every turn but the first.
 */
export async function instantiateUserTemplates(db: Db, tenantId: string, agentId: string, userId: string, templates: readonly BlockTemplate[]): Promise<void> {
  const wanted = templates.filter((t) => t.scope === 'user');
  if (wanted.length === 0) return;
  const scope = and(eq(blockHistory.tenantId, tenantId), eq(blockHistory.agentId, agentId), eq(blockHistory.userId, userId));
  const had = await db
    .selectDistinct({ label: blockHistory.label })
    .from(blockHistory)
    .where(
      and(
        scope,
        inArray(
          blockHistory.label,
          wanted.map((t) => t.label),
        ),
      ),
    );
  const known = new Set(had.map((r) => r.label));
  const missing = wanted.filter((t) => !known.has(t.label));
  if (missing.length === 0) return;
  await db.transaction(async (tx) => {
    for (const template of missing) {
      const fields = fieldsOf(template);
      const [made] = await tx
        .insert(blocks)
        .values({ tenantId, agentId, userId, label: template.label, ...blockColumns(fields) })
        .onConflictDoNothing()
        .returning({ label: blocks.label });
      if (made) await recordEvent(tx, tenantId, { agentId, userId, label: template.label, ...fields }, 'written', { type: 'template', agentVersion: null });
    }
  });
}

/**
 * The agent's own (A, none) blocks of its agent-scope templates, in the transaction that saves its
 * settings: a template that is new or changed since `previous` sets its block whole (value
 * included); an unchanged one leaves the block as the model or the API keeps it. A template taken
 * out leaves its block: deleting data is the API's to do.
 */
export async function syncAgentTemplates(
  tx: Db,
  tenantId: string,
  agentId: string,
  agentVersion: number,
  templates: readonly BlockTemplate[] | undefined,
  previous: readonly BlockTemplate[] | undefined,
): Promise<void> {
  for (const template of templates ?? []) {
    if (template.scope !== 'agent') continue;
    const before = previous?.find((t) => t.scope === 'agent' && t.label === template.label);
    if (sameTemplate(before, template)) continue;
    const fields = fieldsOf(template);
    const scope = { agentId, userId: null };
    const [made] = await tx
      .insert(blocks)
      .values({ tenantId, agentId, userId: '', label: template.label, ...blockColumns(fields) })
      .onConflictDoNothing()
      .returning({ label: blocks.label });
    if (!made)
      await tx
        .update(blocks)
        .set({ ...blockColumns(fields), updatedAt: sql`now()` })
        .where(blockKey(tenantId, template.label, scope));
    await recordEvent(tx, tenantId, { ...scope, label: template.label, ...fields }, 'written', { type: 'template', agentVersion });
  }
}
