import { index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { vectorColumn } from '../vector-column.js';
import { bm25Tables } from './bm25-tables.js';
import { conversations } from './conversations.js';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * Past turns as a corpus (episodic recall): one row per stored turn, its question and final
 * answer, embedded with the message before it and its date in words. Deleted with the conversation.
 */
export const turns = pgTable(
  'turns',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: tenantIdColumn(),
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
    /**
     * Facts an LLM extracted from the turn (one a line), once it has: BM25 keys of the turn, not
     * part of its vector (LongMemEval's fact-augmented keys).
     */
    facts: text('facts').notNull().default(''),
    /** Exactly the text the vector was made of (reembed reads it). */
    embeddedText: text('embedded_text').notNull(),
    embedding: vectorColumn('embedding'),
    bm25Length: integer('bm25_length'),
    /** When the turn was said. */
    at: timestamp('at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('turns_conversation_turn_idx').on(t.conversationId, t.turn), index('turns_tenant_agent_user_idx').on(t.tenantId, t.agentId, t.userId)],
);

/** The BM25 index of turns; its totals row's lock serialises the tenant's writers of turns. */
export const {
  postings: turnPostings,
  termStats: turnTermStats,
  corpusStats: turnCorpusStats,
} = bm25Tables({
  postings: 'turn_postings',
  documentColumn: 'turn_id',
  postingsByDocumentIndex: 'turn_postings_turn_idx',
  termStats: 'turn_term_stats',
  corpusStats: 'turn_corpus_stats',
  totalColumn: 'total',
});
