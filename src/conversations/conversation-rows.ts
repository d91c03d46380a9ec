import { getTableColumns } from 'drizzle-orm';
import type { TurnCheckpoint } from '../compaction/turn-checkpoint.js';
import { conversations, type messages } from '../db/schema/index.js';
import type { Conversation } from './conversation-types.js';

export type MessageInsert = typeof messages.$inferInsert;
export type ConversationRow = Omit<typeof conversations.$inferSelect, 'tenantId'>;

export const toConversation = (row: ConversationRow): Conversation => ({
  id: row.id,
  agentId: row.agentId,
  // '' in the column (NOT NULL, so that equality filters and indexes need no NULL cases).
  userId: row.userId === '' ? null : row.userId,
  title: row.title,
  turnCount: row.turnCount,
  messageCount: row.messageCount,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const { tenantId: _tenantId, ...columns } = getTableColumns(conversations);
/** The conversations table's columns without the tenant: what the store's reads and the import's insert return, for `toConversation`. */
export const conversationColumns = columns;

export const checkpointValues = (conversationId: string, c: TurnCheckpoint) => ({
  conversationId,
  turn: c.turn,
  firstSeq: c.firstSeq,
  lastSeq: c.lastSeq,
  question: c.question,
  summary: c.summary,
  actionableSummary: c.actionableSummary,
  source: c.source,
});
