import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { queryRows } from '../db/query-rows.js';
import { textArray, uuidArray } from '../db/sql-arrays.js';

/**
 * Memories outside an erased user's scope (the agent's shared ones) may have been drawn from that
 * user's conversations: their content stays, but each origin in one of those conversations is
 * marked `deleted` and loses its `quote`, the user's own words. Both the memories' `sources` and
 * the snapshots their history keeps are rewritten.
 */

/** `sources` with every origin whose conversation `erased` matches (a test on the text `e->>'conversationId'`) marked. */
const rewritten = (sources: SQL, erased: (conversationId: SQL) => SQL) => sql`(
  SELECT jsonb_agg(CASE WHEN ${erased(sql`e->>'conversationId'`)} THEN (e - 'quote') || '{"deleted": true}'::jsonb ELSE e END ORDER BY o)
  FROM jsonb_array_elements(${sources}) WITH ORDINALITY AS x(e, o))`;

/** Whether `sources` holds an origin in those conversations that is not marked yet (so a second pass writes nothing). */
const unmarked = (sources: SQL, erased: (conversationId: SQL) => SQL) => sql`EXISTS (
  SELECT 1 FROM jsonb_array_elements(${sources}) AS x(e)
  WHERE ${erased(sql`e->>'conversationId'`)} AND (e->'quote' IS NOT NULL OR e->'deleted' IS DISTINCT FROM 'true'::jsonb))`;

const inIds = (ids: readonly string[]) => (conversationId: SQL) => sql`${conversationId} = ANY(${textArray(ids)})`;

/**
 * Containment tests the GIN index on `memories.sources` (jsonb_path_ops) answers, one per
 * conversation: it has no form for "any of these".
 */
function citesAny(ids: readonly string[]): SQL {
  const tests = ids.map((id) => sql`m.sources @> ${JSON.stringify([{ conversationId: id }])}::jsonb`);
  return sql`(${sql.join(tests, sql` OR `)})`;
}

/** Whether `markMemoryOrigins` would change anything: read without the corpus lock, so that a user with no cited conversation never takes it. */
export async function memoriesCitingUnmarked(db: Db, tenantId: string, userId: string, conversationIds: readonly string[]): Promise<boolean> {
  if (conversationIds.length === 0) return false;
  const rows = await queryRows(
    db,
    sql`SELECT 1 FROM memories m WHERE m.tenant_id = ${tenantId} AND m.user_id <> ${userId} AND ${citesAny(conversationIds)}
      AND ${unmarked(sql`m.sources`, inIds(conversationIds))} LIMIT 1`,
  );
  return rows.length > 0;
}

/**
 * Marks the origins in `conversationIds` of the tenant's memories outside `userId`'s scope, and
 * those the history of each memory changed keeps; run under the memories' corpus lock, as their
 * writers hold it. Returns how many memories and history events changed.
 */
export async function markMemoryOrigins(
  db: Db,
  tenantId: string,
  userId: string,
  conversationIds: readonly string[],
): Promise<{ memories: number; historyEvents: number }> {
  if (conversationIds.length === 0) return { memories: 0, historyEvents: 0 };
  const erased = inIds(conversationIds);
  const changed = await queryRows<{ id: string }>(
    db,
    sql`UPDATE memories m SET sources = ${rewritten(sql`m.sources`, erased)}
      WHERE m.tenant_id = ${tenantId} AND m.user_id <> ${userId} AND ${citesAny(conversationIds)} AND ${unmarked(sql`m.sources`, erased)}
      RETURNING m.id`,
  );
  if (changed.length === 0) return { memories: 0, historyEvents: 0 };
  // Their snapshots written since the pass over the whole history (`markHistoryOrigins`), by the writer that drew them.
  const events = await queryRows(
    db,
    sql`UPDATE memory_history h SET sources = ${rewritten(sql`h.sources`, erased)}
      WHERE h.tenant_id = ${tenantId} AND h.memory_id = ANY(${uuidArray(changed.map((r) => r.id))}) AND jsonb_typeof(h.sources) = 'array'
        AND ${unmarked(sql`h.sources`, erased)}
      RETURNING 1`,
  );
  return { memories: changed.length, historyEvents: events.length };
}

/**
 * Marks, in the history snapshots of the tenant's memories outside `userId`'s scope, the origins
 * in any conversation the user has now. History is append-only and has no index on its sources:
 * one pass over the tenant's events that have sources, writing only those that change. Returns
 * how many events changed.
 */
export async function markHistoryOrigins(db: Db, tenantId: string, userId: string): Promise<number> {
  const erased = (conversationId: SQL) => sql`${conversationId} IN (SELECT id FROM erased)`;
  const rows = await queryRows(
    db,
    sql`WITH erased AS MATERIALIZED (SELECT id::text AS id FROM conversations WHERE tenant_id = ${tenantId} AND user_id = ${userId})
      UPDATE memory_history h SET sources = ${rewritten(sql`h.sources`, erased)}
      WHERE h.tenant_id = ${tenantId} AND h.user_id <> ${userId} AND jsonb_typeof(h.sources) = 'array'
        AND ${unmarked(sql`h.sources`, erased)}
      RETURNING 1`,
  );
  return rows.length;
}
