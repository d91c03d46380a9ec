import type { PgColumn } from 'drizzle-orm/pg-core';
import { type SQL, getTableColumns, sql } from 'drizzle-orm';
import { memories } from '../db/schema/index.js';
import type { Memory } from './memory-types.js';

/**
 * The memory store's rows and the SQL pieces its writes share (pg-memory-store.ts): how a row
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
  validTo: row.validTo,
  expiresAt: row.expiresAt,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

/** A memory as one write leaves it. */
export interface Target {
  agentId: string;
  userId: string;
  key: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  expiresAt: Date | null;
}

/** The row a write found under its key, locked; `expired` rows read as gone. */
export interface LockedRow {
  id: string;
  content: string;
  tags: string[];
  metadata: Record<string, unknown>;
  bm25Length: number | null;
  validTo: Date | null;
  expiresAt: Date | null;
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
