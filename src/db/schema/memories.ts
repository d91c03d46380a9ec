import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { vectorColumn } from '../vector-column.js';
import { bm25Tables } from './bm25-tables.js';
import { tenantIdColumn } from './tenant-id-column.js';

export const memories = pgTable(
  'memories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: tenantIdColumn(),
    agentId: text('agent_id').notNull(),
    /** The user a memory is about; '' for the agent's shared memories, which every user's turn recalls. */
    userId: text('user_id').notNull().default(''),
    key: text('key').notNull(),
    content: text('content').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    embedding: vectorColumn('embedding'),
    /**
     * Terms the analyzer made of `content` (BM25's document length). NULL: not in the BM25 index
     * yet (saved before it existed); `indexUnindexedMemories` adds those at start.
     */
    bm25Length: integer('bm25_length'),
    /** Where the memory came from, oldest first: `MemorySource`s (the writer, and the turn and words it was drawn from). */
    sources: jsonb('sources').$type<Record<string, unknown>[]>().notNull().default([]),
    /** Set when the memory was contradicted: kept (with its history) but no longer recalled. */
    validTo: timestamp('valid_to', { withTimezone: true }),
    /** Valid time: when the fact began to hold in the world (null: always, as far as known). */
    validFrom: timestamp('valid_from', { withTimezone: true }),
    /** Valid time: when the fact stopped holding in the world (null: it still does). */
    validUntil: timestamp('valid_until', { withTimezone: true }),
    /**
     * 'active' | 'quarantined': a write the memory firewall read as an instruction to an assistant
     * is kept for review but never recalled, searched or listed until approved.
     */
    status: text('status').notNull().default('active'),
    /** Why the firewall quarantined it (`QuarantineReason`s); empty while active. */
    quarantineReasons: text('quarantine_reasons').array().notNull().default(sql`'{}'::text[]`),
    /** Past this time the memory reads as gone; the sweeper deletes it later with an `expired` event. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('memories_tenant_agent_user_key_idx').on(t.tenantId, t.agentId, t.userId, t.key),
    // jsonb_path_ops: answers `metadata @> '{"k": v}'`, the form every equality filter takes.
    index('memories_metadata_gin_idx').using('gin', sql`${t.metadata} jsonb_path_ops`).with({ fastupdate: false }),
    // Only rows that can expire: the sweeper's scan costs nothing while no memory has a TTL.
    index('memories_expires_idx').on(t.expiresAt).where(sql`expires_at IS NOT NULL`),
    // fastupdate off: a pending list makes every filtered search scan it (7 ms at 100k rows).
    index('memories_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
    index('memories_tenant_agent_created_idx').on(t.tenantId, t.agentId, t.createdAt, t.id),
    // A read as of a moment looks up the memories changed since: few, however many there are.
    index('memories_tenant_updated_idx').on(t.tenantId, t.updatedAt),
    // Lineage: the memories drawn from a conversation (`sources @> '[{"conversationId": …}]'`).
    index('memories_sources_gin_idx').using('gin', sql`${t.sources} jsonb_path_ops`),
    // The review queue: few rows, so the index stays small.
    index('memories_quarantined_idx').on(t.tenantId, t.agentId).where(sql`status = 'quarantined'`),
    // Empty once everything is indexed, so the check at start costs nothing.
    index('memories_unindexed_idx').on(t.id).where(sql`bm25_length IS NULL`),
  ],
);

/**
 * The BM25 index of memories' content. Its totals row covers all of a tenant's agents (document
 * frequencies are tenant-wide, as for chunks), and its lock serialises the tenant's writers of
 * memories, and only them.
 */
export const {
  postings: memoryPostings,
  termStats: memoryTermStats,
  corpusStats: memoryCorpusStats,
} = bm25Tables({
  postings: 'memory_postings',
  documentColumn: 'memory_id',
  postingsByDocumentIndex: 'memory_postings_memory_idx',
  termStats: 'memory_term_stats',
  corpusStats: 'memory_corpus_stats',
  totalColumn: 'total',
});
