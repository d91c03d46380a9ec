import type { PgColumn } from 'drizzle-orm/pg-core';
import { type SQL, getTableColumns, sql } from 'drizzle-orm';
import { memories } from '../db/schema/index.js';
import type { QuarantineReason } from './quarantine-reasons.js';
import type { Memory, MemoryActor, MemoryOrigin, MemoryQuote, MemoryStatus } from './memory-types.js';

/**
 * The memory store's rows and the SQL pieces its writes share (memory-write.ts and its callers): how a row
 * reads as a Memory, what a write targets and finds locked, when two facts or times are the same.
 * @internal
 */
const { embedding: _embedding, id: _id, bm25Length: _bm25Length, tenantId: _tenantId, ...columns } = getTableColumns(memories);
/** The columns a memory is read by: not its vector, row id, BM25 length or tenant. */
export const memoryColumns = columns;
export type MemoryRow = { [K in keyof typeof memoryColumns]: (typeof memories.$inferSelect)[K] };

export const toMemory = (row: MemoryRow): Memory => ({
  key: row.key,
  content: row.content,
  tags: row.tags,
  metadata: row.metadata,
  agentId: row.agentId,
  userId: row.userId === '' ? null : row.userId,
  sources: toOrigins(row.sources),
  validFrom: row.validFrom,
  validUntil: row.validUntil,
  validTo: row.validTo,
  expiresAt: row.expiresAt,
  status: row.status === 'quarantined' ? 'quarantined' : 'active',
  quarantineReasons: row.quarantineReasons as QuarantineReason[],
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

/** An origin as the `sources` jsonb holds it: absent fields rather than nulls, the time as ISO text. */
export type StoredOrigin = Record<string, unknown>;

/** Origins as stored (also a history event's snapshot, NULL on events older than origins), read. */
export function toOrigins(stored: readonly StoredOrigin[] | null | undefined): MemoryOrigin[] {
  return (stored ?? []).map((o) => {
    const quote = o.quote as MemoryQuote | undefined;
    return {
      actor: o.actor as MemoryOrigin['actor'],
      conversationId: typeof o.conversationId === 'string' ? o.conversationId : null,
      turn: typeof o.turn === 'number' ? o.turn : null,
      quote: quote ? { text: quote.text, start: quote.start, end: quote.end } : null,
      at: new Date(o.at as string),
      ...(o.deleted === true ? { deleted: true } : {}),
    };
  });
}

/**
 * A memory keeps its first origin and its newest ones, this many in all: a fact repeated in every
 * conversation does not grow its row without bound, and where it was first said stays known.
 */
export const MAX_ORIGINS = 50;

/** The origin a write by `actor` adds; none for the server's own writes. */
export function originOf(actor: MemoryActor, quote: MemoryQuote | undefined, at: Date): StoredOrigin | undefined {
  if (actor.type === 'system') return undefined;
  const turn = actor.type === 'api' ? {} : { conversationId: actor.conversationId, turn: actor.turn };
  return JSON.parse(JSON.stringify({ actor: actor.type, ...turn, ...(quote ? { quote } : {}), at: at.toISOString() })) as StoredOrigin;
}

/** `sources` with `origin` added, unless the newest one is already the same writer at the same turn. */
export function withOrigin(sources: readonly StoredOrigin[], origin: StoredOrigin | undefined): StoredOrigin[] {
  if (!origin) return [...sources];
  const last = sources[sources.length - 1];
  const sameTurn = origin.conversationId !== undefined && last?.conversationId === origin.conversationId && last.turn === origin.turn;
  if (last && sameTurn && last.actor === origin.actor && !last.deleted) {
    return [...sources.slice(0, -1), { ...last, ...(origin.quote ? { quote: origin.quote } : {}) }];
  }
  const all = [...sources, origin];
  return all.length <= MAX_ORIGINS ? all : [all[0]!, ...all.slice(all.length - MAX_ORIGINS + 1)];
}

/** A memory as one write leaves it. */
export interface Target {
  agentId: string;
  userId: string;
  key: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  expiresAt: Date | null;
  validFrom: Date | null;
  validUntil: Date | null;
  /** The user's words a new wording was drawn from (extraction). */
  quote?: MemoryQuote;
  /** The firewall's verdict on this write. */
  status: MemoryStatus;
  quarantineReasons: string[];
}

/** The row a write found under its key, locked; `expired` rows read as gone. */
export interface LockedRow {
  id: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  sources: StoredOrigin[];
  validFrom: Date | null;
  validUntil: Date | null;
  bm25Length: number | null;
  validTo: Date | null;
  expiresAt: Date | null;
  status: string;
  quarantineReasons: string[];
  expired: boolean;
}

/**
 * The text two facts are compared by for duplicates: case, runs of whitespace and a final full
 * stop do not make a new fact. Computed by the database on both sides, so it is one function.
 */
export const normalizedText = (text: SQL | PgColumn | string) => sql`lower(regexp_replace(regexp_replace(btrim(${text}), '\\s+', ' ', 'g'), '[.!]+$', ''))`;

export const notExpired = sql`(${memories.expiresAt} IS NULL OR ${memories.expiresAt} > now())`;

export function expiryOf(input: { ttlSeconds?: number | null; expiresAt?: Date | null }, now = Date.now()): Date | null | undefined {
  if (input.ttlSeconds === null || input.expiresAt === null) return null;
  if (input.ttlSeconds !== undefined) return new Date(now + input.ttlSeconds * 1000);
  return input.expiresAt;
}

export const sameTags = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((t, i) => t === b[i]);
export const sameTime = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/** The fields a history event keeps beside content and tags, as the write leaves the memory. */
export const snapshotOf = (
  memory: Pick<Target, 'metadata' | 'expiresAt' | 'validFrom' | 'validUntil'> & { status: string; quarantineReasons: readonly string[] },
  sources: readonly StoredOrigin[],
): {
  metadata: Record<string, unknown>;
  sources: readonly StoredOrigin[];
  validFrom: Date | null;
  validUntil: Date | null;
  expiresAt: Date | null;
  status: string;
  quarantineReasons: readonly string[];
} => ({
  metadata: memory.metadata,
  sources,
  validFrom: memory.validFrom,
  validUntil: memory.validUntil,
  expiresAt: memory.expiresAt,
  status: memory.status,
  quarantineReasons: memory.quarantineReasons,
});

/**
 * `sources` (a jsonb column of origins) with those in `conversationId` marked deleted and their
 * quotes dropped: the words go with the conversation, the fact that it was the origin stays.
 */
export const markedDeleted = (sources: PgColumn | SQL, conversationId: string): SQL =>
  sql`(SELECT coalesce(jsonb_agg(CASE WHEN o->>'conversationId' = ${conversationId} THEN (o - 'quote') || '{"deleted": true}'::jsonb ELSE o END ORDER BY n), '[]'::jsonb)
    FROM jsonb_array_elements(${sources}) WITH ORDINALITY AS e(o, n))`;
