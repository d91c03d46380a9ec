import type { QuarantineReason } from './quarantine-reasons.js';
import { type SQL, and, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { queryRows } from '../db/query-rows.js';
import { textArray, vectorParam } from '../db/sql-arrays.js';
import { decodeCursor } from '../retrieval/cursor.js';
import type { CorpusFilter } from '../retrieval/filter.js';
import { tagConditions, validAtSql } from '../retrieval/filter-sql.js';
import { metadataFilterToSql } from '../retrieval/metadata-filter-sql.js';
import { type StoredOrigin, toOrigins } from './memory-rows.js';
import type { Memory } from './memory-types.js';

/**
 * Memories as they were at a moment of record time (`asOf`), rebuilt from their history: each
 * event keeps the memory as it left it, so a memory's latest event up to that moment is the
 * memory then. One that was deleted or had expired by then is gone; one invalidated by then
 * counts as invalid. Events recorded before the history kept metadata read the memory's current
 * metadata (or none, once it is deleted).
 */
export interface MemoryVersion {
  memoryId: string;
  memory: Memory;
  /** Its row today is exactly as it was then: the current index can score it. */
  unchanged: boolean;
  /** Today's vector is of the words it had then (only its tags, metadata or validity changed since). */
  sameContent: boolean;
  /** Creation time as Postgres prints it: the list's keyset cursor. */
  createdAtText: string;
  /** Cosine similarity of today's vector to the query's, when asked and `sameContent`. */
  similarity: number | null;
}

interface VersionRow {
  memory_id: string;
  key: string;
  agent_id: string;
  user_id: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  sources: StoredOrigin[];
  valid_from: Date | string | null;
  valid_until: Date | string | null;
  expires_at: Date | string | null;
  valid_to: Date | string | null;
  updated_at: Date | string;
  created_at: Date | string;
  created_at_text: string;
  unchanged: boolean;
  same_content: boolean | null;
  similarity: number | string | null;
  status: string;
  quarantine_reasons: string[];
}

export interface VersionQuery {
  filter: CorpusFilter;
  asOf: Date;
  /** One key only (a get). */
  key?: string;
  /** Only versions the current index cannot score (`unchanged` false): a search's own part. */
  changedOnly?: boolean;
  /** Cosine similarity of today's vectors to this one, where their words are the same. */
  vector?: readonly number[];
  /** Newest first from this list cursor on, at most `limit` (a list page). */
  cursor?: string;
  limit?: number;
}

const date = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

/** The history's columns a filter's equalities and memberships name. */
const HISTORY_COLUMNS: Readonly<Record<string, SQL>> = {
  agentId: sql`h.agent_id`,
  userId: sql`h.user_id`,
};

/**
 * The firewall's verdict on the version: its event's, or for events older than the history's
 * status, the row's today (gone: it was active). Compared on the version, not on each event: an
 * event's status says nothing of the versions after it.
 */
const VERSION_STATUS = sql`coalesce(v.status, m.status, 'active')`;

function historyColumn(name: string): SQL {
  const column = HISTORY_COLUMNS[name];
  if (!column) throw new Error(`the memory history has no column for the filter "${name}"`);
  return column;
}

export async function readVersions(db: Db, q: VersionQuery): Promise<MemoryVersion[]> {
  const { filter } = q;
  const asOf = q.asOf.toISOString();
  const { status, ...equals } = filter.equals;
  // A moment given to the millisecond covers all of it: the database's times have microseconds.
  const end = sql`(${asOf}::timestamptz + interval '1 millisecond')`;
  const scope = [
    sql`h.tenant_id = ${filter.tenantId}`,
    ...Object.entries(equals).map(([name, value]) => sql`${historyColumn(name)} = ${value}`),
    ...Object.entries(filter.oneOf ?? {}).map(([name, values]) => sql`${historyColumn(name)} = ANY(${textArray(values)})`),
    ...(q.key !== undefined ? [sql`h.key = ${q.key}`] : []),
    sql`h.at < ${end}`,
  ];
  const events = sql`h.memory_id, h.key, h.agent_id, h.user_id, h.event, h.content, h.tags, h.metadata, h.sources, h.valid_from,
    h.valid_until, h.expires_at, h.status, h.quarantine_reasons, h.at`;
  // Latest event per memory up to the moment. For a search's changed memories (the complement of
  // `unchanged` below) only theirs are read, each by its own index range, not the scope's history.
  const latest = q.changedOnly
    ? sql`SELECT e.* FROM (
        SELECT id FROM memories WHERE tenant_id = ${filter.tenantId} AND updated_at >= ${end}
        UNION
        SELECT id FROM memories WHERE tenant_id = ${filter.tenantId} AND expires_at IS NOT NULL AND expires_at <= now()
        UNION
        SELECT memory_id FROM memory_history WHERE tenant_id = ${filter.tenantId} AND at >= ${end} AND event IN ('deleted', 'expired')
      ) changed(id)
      CROSS JOIN LATERAL (SELECT ${events} FROM memory_history h WHERE h.memory_id = changed.id AND ${and(...scope)} ORDER BY h.id DESC LIMIT 1) e`
    : sql`SELECT DISTINCT ON (h.memory_id) ${events} FROM memory_history h WHERE ${and(...scope)} ORDER BY h.memory_id, h.id DESC`;
  const metadata = sql`coalesce(v.metadata, m.metadata, '{}'::jsonb)`;
  const conditions = [
    sql`v.event IN ('created', 'updated', 'invalidated', 'approved')`,
    sql`(v.expires_at IS NULL OR v.expires_at > ${asOf}::timestamptz)`,
    ...(filter.includeInvalid ? [] : [sql`v.event <> 'invalidated'`]),
    ...tagConditions(sql`v.tags`, filter.tags),
    ...(filter.metadata ? [metadataFilterToSql(filter.metadata, metadata)] : []),
    ...(filter.validAt !== undefined ? [validAtSql(filter.validAt, sql`v.valid_from`, sql`v.valid_until`)] : []),
    ...(status !== undefined ? [sql`${VERSION_STATUS} = ${status}`] : []),
  ];
  // Unchanged: the row today is the row then, and today's filter on it (expiry included) agrees.
  const unchanged = sql`(m.id IS NOT NULL AND m.updated_at < ${end} AND (m.expires_at IS NULL OR m.expires_at > now()))`;
  const similarity = q.vector ? sql`CASE WHEN m.content = v.content THEN 1 - (m.embedding <=> ${vectorParam(q.vector)}) END` : sql`NULL::float8`;
  const outer: SQL[] = [];
  if (q.changedOnly) outer.push(sql`NOT x.unchanged`);
  if (q.cursor) {
    const { createdAt, id } = decodeCursor(q.cursor);
    outer.push(sql`(x.created_at < ${createdAt}::timestamptz OR (x.created_at = ${createdAt}::timestamptz AND x.memory_id < ${id}::uuid))`);
  }
  // Then the memory's row today, one index lookup each (LIMIT keeps the planner from turning it into a join that scans them all), and its creation: its latest `created` event up to the moment (an expired memory
  // saved again is created anew under the same row).
  const rows = await queryRows<VersionRow>(
    db,
    sql`SELECT * FROM (
      SELECT v.memory_id, v.key, v.agent_id, v.user_id, v.content, v.tags, ${metadata} AS metadata,
        coalesce(v.sources, '[]'::jsonb) AS sources, v.valid_from, v.valid_until, v.expires_at,
        CASE WHEN v.event = 'invalidated' THEN v.at END AS valid_to, v.at AS updated_at,
        coalesce(c.created_at, v.at) AS created_at, coalesce(c.created_at, v.at)::text AS created_at_text,
        ${unchanged} AS unchanged, m.content = v.content AS same_content, ${similarity} AS similarity,
        ${VERSION_STATUS} AS status, coalesce(v.quarantine_reasons, m.quarantine_reasons, '{}'::text[]) AS quarantine_reasons
      FROM (${latest}) v
      LEFT JOIN LATERAL (
        SELECT id, content, metadata, embedding, updated_at, expires_at, status, quarantine_reasons FROM memories WHERE memories.id = v.memory_id AND memories.tenant_id = ${filter.tenantId} LIMIT 1
      ) m ON TRUE
      LEFT JOIN LATERAL (
        SELECT max(h2.at) AS created_at FROM memory_history h2
        WHERE h2.memory_id = v.memory_id AND h2.tenant_id = ${filter.tenantId} AND h2.event = 'created' AND h2.at < ${end}
      ) c ON TRUE
      WHERE ${and(...conditions)}
    ) x
    ${outer.length ? sql`WHERE ${and(...outer)}` : sql``}
    ORDER BY x.created_at DESC, x.memory_id DESC
    ${q.limit !== undefined ? sql`LIMIT ${q.limit}` : sql``}`,
  );
  return rows.map((r) => ({
    memoryId: r.memory_id,
    unchanged: Boolean(r.unchanged),
    sameContent: r.same_content === true,
    createdAtText: r.created_at_text,
    similarity: r.similarity === null ? null : Number(r.similarity),
    memory: {
      key: r.key,
      content: r.content,
      tags: r.tags,
      metadata: r.metadata,
      agentId: r.agent_id,
      userId: r.user_id === '' ? null : r.user_id,
      sources: toOrigins(r.sources),
      validFrom: date(r.valid_from),
      validUntil: date(r.valid_until),
      validTo: date(r.valid_to),
      expiresAt: date(r.expires_at),
      status: r.status === 'quarantined' ? 'quarantined' : 'active',
      quarantineReasons: r.quarantine_reasons as QuarantineReason[],
      createdAt: new Date(r.created_at),
      updatedAt: new Date(r.updated_at),
    },
  }));
}
