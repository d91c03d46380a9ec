import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { ToolCall } from '../llm/messages.js';
import type { SummaryLayer } from '../compaction/structural-summary.js';
import { vectorColumn } from './vector-column.js';

/**
 * The tenant owning a row (an API key's tenant; `default` without keys). Every store query
 * filters by it. Spelt out rather than imported from src/tenancy: drizzle-kit loads this file alone.
 */
const tenantId = () => text('tenant_id').notNull().default('default');

/** One row per vector space in use: which embedder wrote the vectors of a table, and their size. */
export const vectorSpaces = pgTable('vector_spaces', {
  tableName: text('table_name').primaryKey(),
  embedderId: text('embedder_id').notNull(),
  dimensions: integer('dimensions').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const memories = pgTable(
  'memories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: tenantId(),
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
    /** Set when the memory was contradicted: kept (with its history) but no longer recalled. */
    validTo: timestamp('valid_to', { withTimezone: true }),
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
    // Empty once everything is indexed, so the check at start costs nothing.
    index('memories_unindexed_idx').on(t.id).where(sql`bm25_length IS NULL`),
  ],
);

/**
 * BM25 postings of memories: how often each term occurs in each memory's content. The tenant
 * leads the key, so a text search reads its own tenant's postings only.
 */
export const memoryPostings = pgTable(
  'memory_postings',
  {
    tenantId: tenantId(),
    memoryId: uuid('memory_id')
      .notNull()
      .references(() => memories.id, { onDelete: 'cascade' }),
    term: text('term').notNull(),
    tf: integer('tf').notNull(),
    /** The row's length in terms, as its length column holds it: a search scores from the postings alone. */
    docLength: integer('doc_length').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.term, t.memoryId] }), index('memory_postings_memory_idx').on(t.memoryId)],
);

/**
 * A tenant's memories holding each term (BM25's document frequency), kept in step with
 * `memory_postings`. Per tenant: shared frequencies would let one tenant's writes move another's scores.
 */
export const memoryTermStats = pgTable(
  'memory_term_stats',
  {
    tenantId: tenantId(),
    term: text('term').notNull(),
    df: integer('df').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.term] })],
);

/**
 * One row of BM25 statistics per tenant over its indexed memories (all its agents: document
 * frequencies are tenant-wide, as for chunks), and the analyzer of its postings; the row lock
 * serialises the tenant's writers of memories, and only them.
 */
export const memoryCorpusStats = pgTable('memory_corpus_stats', {
  tenantId: text('tenant_id').primaryKey().default('default'),
  total: bigint('total', { mode: 'number' }).notNull().default(0),
  totalLength: bigint('total_length', { mode: 'number' }).notNull().default(0),
  analyzerId: text('analyzer_id').notNull(),
});

/**
 * Ingested documents. `content_hash` (sha256 of the normalised text) makes re-ingesting the same
 * content a no-op; `source` (a URL, a path) names a document that a later ingest replaces.
 */
export const documents = pgTable(
  'documents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: tenantId(),
    title: text('title').notNull(),
    source: text('source'),
    contentHash: text('content_hash').notNull(),
    format: text('format').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /** The extracted, normalised text; chunk offsets refer to it. */
    text: text('text').notNull(),
    /** The BM25 passage size its chunks were grouped by; NULL for documents indexed before passages (one per chunk). */
    passageTokens: integer('passage_tokens'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // NULLs are distinct: any number of documents without a source.
    uniqueIndex('documents_tenant_source_idx').on(t.tenantId, t.source),
    // Per tenant: two tenants ingesting the same text get a document each.
    uniqueIndex('documents_tenant_content_hash_idx').on(t.tenantId, t.contentHash),
    index('documents_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
    index('documents_tenant_created_idx').on(t.tenantId, t.createdAt, t.id),
  ],
);

/**
 * Pieces of a document, each embedded and indexed for BM25; the tenant and tags are the
 * document's, copied so that vector and BM25 scans filter without a join.
 */
export const chunks = pgTable(
  'chunks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: tenantId(),
    documentId: uuid('document_id')
      .notNull()
      .references(() => documents.id, { onDelete: 'cascade' }),
    index: integer('index').notNull(),
    text: text('text').notNull(),
    /**
     * Embedded in front of `text` (the document title, when it fits the embedder's
     * window); not part of the document's text, so not covered by `start`/`end`.
     */
    context: text('context').notNull().default(''),
    headingPath: text('heading_path').array().notNull().default(sql`'{}'::text[]`),
    start: integer('start').notNull(),
    end: integer('end').notNull(),
    tokenCount: integer('token_count').notNull(),
    /**
     * The first chunk of this chunk's BM25 passage (consecutive chunks of the document, indexed
     * together); a chunk that starts a passage names itself. The postings are the first chunk's.
     */
    passageId: uuid('passage_id').notNull(),
    /** On a passage's first chunk: the number of terms in the passage, BM25's document length. NULL on the others. */
    bm25Length: integer('bm25_length'),
    embedding: vectorColumn('embedding'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
  },
  (t) => [
    uniqueIndex('chunks_document_index_idx').on(t.documentId, t.index),
    index('chunks_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
    // Counts a tenant's matches before a filtered vector search (exact scan or HNSW).
    index('chunks_tenant_idx').on(t.tenantId),
    // A passage's chunks, to pick the one a hit cites.
    index('chunks_passage_idx').on(t.passageId),
  ],
);

/**
 * How many rows of a vector table each filter scope and tag holds, kept by triggers in the
 * writing transaction (migration 0009): a filtered vector search reads its selectivity here, in
 * the statement that sets up the search, instead of counting the matching rows first. `scope` is
 * the table's own (memories: the agent, and the agent with a user after U+001F; chunks: '');
 * `tag` '' counts every row of the scope. The counts are upper bounds for a search: they include
 * invalidated and expired rows, and rows without a vector.
 */
export const vectorFilterStats = pgTable(
  'vector_filter_stats',
  {
    tableName: text('table_name').notNull(),
    tenantId: text('tenant_id').notNull(),
    scope: text('scope').notNull(),
    tag: text('tag').notNull(),
    rows: bigint('rows', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tableName, t.tenantId, t.scope, t.tag] })],
);

/** BM25 postings: how often each term occurs in each passage, keyed by its first chunk; the tenant leads the key. */
export const postings = pgTable(
  'postings',
  {
    tenantId: tenantId(),
    chunkId: uuid('chunk_id')
      .notNull()
      .references(() => chunks.id, { onDelete: 'cascade' }),
    term: text('term').notNull(),
    tf: integer('tf').notNull(),
    /** The row's length in terms, as its length column holds it: a search scores from the postings alone. */
    docLength: integer('doc_length').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.term, t.chunkId] }), index('postings_chunk_idx').on(t.chunkId)],
);

/** A tenant's passages holding each term (BM25's document frequency), kept in step with `postings`. */
export const termStats = pgTable(
  'term_stats',
  {
    tenantId: tenantId(),
    term: text('term').notNull(),
    df: integer('df').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.term] })],
);

/**
 * One row of BM25 statistics per tenant over its passages (`total_chunks` counts passages: the
 * name predates them, when every chunk was one), and the analyzer that produced its postings: the
 * row lock also serialises the tenant's writers of postings and statistics.
 */
export const corpusStats = pgTable('corpus_stats', {
  tenantId: text('tenant_id').primaryKey().default('default'),
  totalChunks: bigint('total_chunks', { mode: 'number' }).notNull().default(0),
  totalLength: bigint('total_length', { mode: 'number' }).notNull().default(0),
  analyzerId: text('analyzer_id').notNull(),
});

/** A chat conversation of one agent. Its messages are append-only; deleting it deletes them. */
export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    tenantId: tenantId(),
    agentId: text('agent_id').notNull(),
    /** The user the conversation is with; '' when none was named. */
    userId: text('user_id').notNull().default(''),
    /** The first question, clipped: something to show in a list. */
    title: text('title').notNull(),
    turnCount: integer('turn_count').notNull().default(0),
    messageCount: integer('message_count').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('conversations_tenant_agent_created_idx').on(t.tenantId, t.agentId, t.createdAt, t.id)],
);

/** Every message of a conversation in order (`seq`), grouped in turns; tool calls and results included. */
export const messages = pgTable(
  'messages',
  {
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    turn: integer('turn').notNull(),
    role: text('role').notNull(),
    content: text('content'),
    toolCalls: jsonb('tool_calls').$type<ToolCall[]>().notNull().default([]),
    toolCallId: text('tool_call_id'),
    isError: boolean('is_error').notNull().default(false),
    /** What the reply told the client besides the text (citations), kept for reading the conversation back. */
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.conversationId, t.seq] }),
    check('messages_role', sql`${t.role} IN ('user', 'assistant', 'tool')`),
  ],
);

/** One checkpoint per finished turn, written once after the turn and reused by every compaction. */
export const checkpoints = pgTable(
  'checkpoints',
  {
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    turn: integer('turn').notNull(),
    firstSeq: integer('first_seq').notNull(),
    lastSeq: integer('last_seq').notNull(),
    question: text('question').notNull(),
    summary: text('summary').notNull(),
    actionableSummary: text('actionable_summary').notNull(),
    /** `llm`, or `rules` when the LLM failed or timed out. */
    source: text('source').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.turn] })],
);

/** The structural summary of a conversation's middle turns, extended by later compactions. */
export const conversationSummaries = pgTable('conversation_summaries', {
  conversationId: uuid('conversation_id')
    .primaryKey()
    .references(() => conversations.id, { onDelete: 'cascade' }),
  fromTurn: integer('from_turn').notNull(),
  throughTurn: integer('through_turn').notNull(),
  layers: jsonb('layers').$type<SummaryLayer[]>().notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Every change of a memory, oldest first by `id`: kept after the memory is deleted, so its
 * lineage can still be read (by scope and key) and followed.
 */
export const memoryHistory = pgTable(
  'memory_history',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: tenantId(),
    memoryId: uuid('memory_id').notNull(),
    agentId: text('agent_id').notNull(),
    userId: text('user_id').notNull().default(''),
    key: text('key').notNull(),
    /** created | updated | invalidated | deleted | expired */
    event: text('event').notNull(),
    content: text('content'),
    previousContent: text('previous_content'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    previousTags: text('previous_tags').array(),
    /** `{type: 'api'}`, `{type: 'tool', conversationId, turn}` or `{type: 'extraction', conversationId, turn}`. */
    actor: jsonb('actor').$type<Record<string, unknown>>().notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('memory_history_scope_key_idx').on(t.tenantId, t.agentId, t.userId, t.key, t.id),
    index('memory_history_memory_idx').on(t.memoryId, t.id),
  ],
);

/**
 * Past turns as a corpus (episodic recall): one row per stored turn, its question and final
 * answer, embedded with the message before it and its date in words. Deleted with the conversation.
 */
export const turns = pgTable(
  'turns',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: tenantId(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    agentId: text('agent_id').notNull(),
    userId: text('user_id').notNull().default(''),
    turn: integer('turn').notNull(),
    question: text('question').notNull(),
    answer: text('answer').notNull(),
    /** The message before the question (the previous turn's answer); '' on a first turn. */
    before: text('before').notNull().default(''),
    /** The next turn's question, once there is one: indexed for BM25 beside the turn. */
    after: text('after').notNull().default(''),
    /** Exactly the text the vector was made of (reembed reads it). */
    embeddedText: text('embedded_text').notNull(),
    embedding: vectorColumn('embedding'),
    bm25Length: integer('bm25_length'),
    /** When the turn was said. */
    at: timestamp('at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('turns_conversation_turn_idx').on(t.conversationId, t.turn),
    index('turns_tenant_agent_user_idx').on(t.tenantId, t.agentId, t.userId),
  ],
);

/** BM25 postings of turns; the tenant leads the key. */
export const turnPostings = pgTable(
  'turn_postings',
  {
    tenantId: tenantId(),
    turnId: uuid('turn_id')
      .notNull()
      .references(() => turns.id, { onDelete: 'cascade' }),
    term: text('term').notNull(),
    tf: integer('tf').notNull(),
    /** The row's length in terms, as its length column holds it: a search scores from the postings alone. */
    docLength: integer('doc_length').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.term, t.turnId] }), index('turn_postings_turn_idx').on(t.turnId)],
);

export const turnTermStats = pgTable(
  'turn_term_stats',
  {
    tenantId: tenantId(),
    term: text('term').notNull(),
    df: integer('df').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.term] })],
);

/** BM25 statistics of a tenant's turns; the row lock serialises the tenant's writers of turns. */
export const turnCorpusStats = pgTable('turn_corpus_stats', {
  tenantId: text('tenant_id').primaryKey().default('default'),
  total: bigint('total', { mode: 'number' }).notNull().default(0),
  totalLength: bigint('total_length', { mode: 'number' }).notNull().default(0),
  analyzerId: text('analyzer_id').notNull(),
});

/**
 * API keys: each belongs to a tenant. Only the sha256 of the key is stored (see
 * src/auth/api-key-secret.ts for why not a slow password hash); `prefix`, the key's first
 * characters, names it in listings and revocations without being enough to use it.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id').notNull(),
    name: text('name').notNull().default(''),
    keyHash: text('key_hash').notNull(),
    prefix: text('prefix').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set once: a revoked key is refused, and kept so that listings show what it was. */
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('api_keys_key_hash_idx').on(t.keyHash), index('api_keys_prefix_idx').on(t.prefix)],
);

/**
 * Agents: the settings a chat runs with for an `agentId` (the namespace of its memories and
 * conversations). `settings` is the current version's; every change writes a new version below.
 */
export const agents = pgTable(
  'agents',
  {
    tenantId: tenantId(),
    id: text('id').notNull(),
    version: integer('version').notNull(),
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] }), index('agents_tenant_created_idx').on(t.tenantId, t.createdAt, t.id)],
);

/** Every version of every agent, kept so that a stored turn's `agentVersion` can be read back. */
export const agentVersions = pgTable(
  'agent_versions',
  {
    tenantId: tenantId(),
    agentId: text('agent_id').notNull(),
    version: integer('version').notNull(),
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.agentId, t.version] })],
);

/**
 * A chat turn's run: its status and, while it waits for the client (tool outputs, approvals), the
 * state it resumes from (messages so far, pending calls, usage, sources), so that it survives a
 * restart. The conversation gets the turn only when the run completes.
 */
export const runs = pgTable(
  'runs',
  {
    id: uuid('id').primaryKey(),
    tenantId: tenantId(),
    agentId: text('agent_id').notNull(),
    userId: text('user_id').notNull().default(''),
    conversationId: uuid('conversation_id').notNull(),
    /** The agent version the run started with; null when the agent had no record (deployment defaults). */
    agentVersion: integer('agent_version'),
    status: text('status').notNull(),
    stopReason: text('stop_reason'),
    usage: jsonb('usage').$type<Record<string, number>>().notNull().default({}),
    state: jsonb('state').$type<Record<string, unknown>>(),
    error: jsonb('error').$type<Record<string, unknown>>(),
    /** A paused run left unanswered past this time is expired. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('runs_tenant_created_idx').on(t.tenantId, t.createdAt),
    // A conversation's waiting run, looked up before every turn of it; only waiting runs are indexed.
    index('runs_waiting_conversation_idx')
      .on(t.conversationId)
      .where(sql`status IN ('requires_action', 'requires_approval')`),
    // The sweeper's scan: runs that wait or run, by how long they have.
    index('runs_open_idx').on(t.status, t.updatedAt).where(sql`status IN ('running', 'requires_action', 'requires_approval')`),
    check('runs_status', sql`${t.status} IN ('running', 'requires_action', 'requires_approval', 'completed', 'failed', 'cancelled', 'expired')`),
  ],
);

/**
 * Durable jobs (ingestion, batches of it): the queue itself, claimed with `FOR UPDATE SKIP LOCKED`
 * by any process on the database. A job's effect and its `succeeded` are committed in one
 * transaction, and `attempt` fences a worker that lost its lease (see src/jobs/job-queue.ts).
 */
export const jobs = pgTable(
  'jobs',
  {
    id: uuid('id').primaryKey(),
    tenantId: tenantId(),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    /** The batch this job is an item of; a batch job itself is never claimed, its items are. */
    parentId: uuid('parent_id'),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /** An uploaded file's bytes, base64: kept out of `payload` so that listings stay small. */
    content: text('content'),
    progress: jsonb('progress').$type<Record<string, unknown>>().notNull(),
    /** Bumped with every progress write: the SSE event id. */
    eventSeq: integer('event_seq').notNull().default(0),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: jsonb('error').$type<Record<string, unknown>>(),
    attempt: integer('attempt').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(3),
    runAt: timestamp('run_at', { withTimezone: true }).notNull().defaultNow(),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    workerId: text('worker_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('jobs_status', sql`${t.status} IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')`),
    index('jobs_tenant_created_idx').on(t.tenantId, t.createdAt, t.id),
    index('jobs_parent_idx').on(t.parentId).where(sql`parent_id IS NOT NULL`),
    // The claim's scan: only open jobs are indexed, so the index stays as small as the backlog.
    index('jobs_open_idx').on(t.runAt).where(sql`status IN ('queued', 'running')`),
  ],
);
