import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/** A chat conversation of one agent. Its messages are append-only; deleting it deletes them. */
export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    tenantId: tenantIdColumn(),
    agentId: text('agent_id').notNull(),
    /** The user the conversation is with; '' when none was named. */
    userId: text('user_id').notNull().default(''),
    /** The first question, clipped: something to show in a list. */
    title: text('title').notNull(),
    /** A delegation's conversation: the lead's it was started from; left out of the user's list and recall. */
    parentConversationId: uuid('parent_conversation_id'),
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
    /** An assistant message's tool calls, in the shape the conversation store reads them back as. */
    toolCalls: jsonb('tool_calls').$type<unknown[]>().notNull().default([]),
    toolCallId: text('tool_call_id'),
    isError: boolean('is_error').notNull().default(false),
    /** What the reply told the client besides the text (citations), kept for reading the conversation back. */
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.seq] }), check('messages_role', sql`${t.role} IN ('user', 'assistant', 'tool')`)],
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
  /** The summary's layers, oldest first, in the shape the conversation store reads them back as. */
  layers: jsonb('layers').$type<unknown[]>().notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
