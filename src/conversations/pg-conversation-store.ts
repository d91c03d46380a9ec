import { and, asc, desc, eq, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { ChatMessage, ToolCall } from '../llm/messages.js';
import { clipChars } from '../compaction/clip-text.js';
import type { StructuralSummary, SummaryLayer } from '../compaction/structural-summary.js';
import type { TurnCheckpoint } from '../compaction/turn-checkpoint.js';
import type { Db } from '../db/database.js';
import type { AfterBulkWrite } from '../db/table-statistics.js';
import { isForeignKeyViolation } from '../db/foreign-key-violation.js';
import { queryRows } from '../db/query-rows.js';
import { checkpoints, conversationSummaries, conversations, messages, turns } from '../db/schema/index.js';
import { decodeCursor, encodeCursor } from '../retrieval/cursor.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import {
  type AppendedTurn,
  type Conversation,
  type ConversationExport,
  ConversationNotFoundError,
  type ConversationPage,
  type ConversationStore,
  type LoadedConversation,
  type NewMessage,
  type StoredMessage,
} from './conversation-types.js';
import { attachmentsOf, deleteUnkeptAttachments } from './attachment-store.js';
import { storedImagesOf, withImageRefs } from './image-refs.js';
import { linkImages } from './turn-image-links.js';
import { toExportMessage } from './export-message.js';
import { type TurnIndex, deleteConversationTurns } from './turn-index.js';
import { createConversationImport } from './conversation-import.js';
import { type ConversationRow, type MessageInsert, checkpointValues, conversationColumns, toConversation } from './conversation-rows.js';

const TITLE_MAX_CHARS = 120;

/**
 * jsonb refuses an unpaired surrogate (a model's reply may hold one) where a text column stores
 * U+FFFD: the messages go in as jsonb, so they are made well-formed as a text column would.
 */
const wellFormed = (_key: string, value: unknown) => (typeof value === 'string' ? value.replace(/[\uD800-\uDFFF]/gu, '\uFFFD') : value);

type MessageRow = typeof messages.$inferSelect;

function toChatMessage(row: Pick<MessageRow, 'role' | 'content' | 'toolCalls' | 'toolCallId' | 'isError' | 'metadata'>): ChatMessage {
  const images = storedImagesOf(row.metadata);
  switch (row.role) {
    case 'user':
      return { role: 'user', content: row.content ?? '', ...(images ? { images } : {}) };
    case 'tool':
      return {
        role: 'tool',
        toolCallId: row.toolCallId ?? '',
        content: row.content ?? '',
        ...(row.isError ? { isError: true } : {}),
        ...(images ? { images } : {}),
      };
    default:
      // The column holds what `toRow` wrote: the assistant message's own tool calls.
      return { role: 'assistant', content: row.content, toolCalls: row.toolCalls as ToolCall[] };
  }
}

function toRow(conversationId: string, seq: number, turn: number, entry: NewMessage): MessageInsert {
  const m = entry.message;
  if (m.role === 'system') throw new TypeError('system messages are not stored: the prompt is rebuilt on every turn');
  return {
    conversationId,
    seq,
    turn,
    role: m.role,
    content: m.content,
    toolCalls: m.role === 'assistant' ? m.toolCalls : [],
    toolCallId: m.role === 'tool' ? m.toolCallId : null,
    isError: m.role === 'tool' && m.isError === true,
    metadata: withImageRefs(entry.metadata ?? {}, m.role === 'assistant' ? undefined : m.images),
  };
}

function titleOf(entries: readonly NewMessage[]): string {
  const first = entries.find((e) => e.message.role === 'user')?.message.content ?? '';
  return clipChars(first.replace(/\s+/g, ' ').trim(), TITLE_MAX_CHARS);
}

export interface PgConversationStoreOptions {
  db: Db;
  /** The tenant whose conversations this store reads and writes, and only those. Default `default`. */
  tenantId?: string;
  /**
   * The tenant's turns corpus: an import indexes its turns with it, in its own transaction, so
   * they are recalled at once. Without one, imported turns wait for the turn-index hook's backfill.
   */
  turnIndex?: TurnIndex;
  /** Called after an import commits, to bring planner statistics up to date (`TableStatistics`). */
  afterBulkWrite?: AfterBulkWrite;
}

export function createPgConversationStore(options: PgConversationStoreOptions): ConversationStore {
  const { db, turnIndex } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const importConversation = createConversationImport({ db, tenantId, turnIndex, afterBulkWrite: options.afterBulkWrite });
  const ofTenant = eq(conversations.tenantId, tenantId);
  // Messages, checkpoints and summaries are reached through their conversation: once it is found
  // in this tenant, its id selects them.
  const owned = (id: string, agentId: string) => and(eq(conversations.id, id), ofTenant, eq(conversations.agentId, agentId));

  async function get(id: string, agentId: string): Promise<Conversation | null> {
    const [row] = await db.select(conversationColumns).from(conversations).where(owned(id, agentId));
    return row ? toConversation(row) : null;
  }

  async function ownedByOther(id: string, agentId: string, userId?: string | null): Promise<boolean> {
    // Ids are one key space over every tenant (the primary key), so this one query looks past the
    // tenant: it answers whether the id is free, and reveals nothing of the row it finds.
    const otherUser = userId === undefined ? undefined : ne(conversations.userId, userId ?? '');
    const [row] = await db
      .select({ id: conversations.id })
      .from(conversations)
      .where(and(eq(conversations.id, id), or(ne(conversations.tenantId, tenantId), ne(conversations.agentId, agentId), otherUser)));
    return row !== undefined;
  }

  async function load(id: string, agentId: string): Promise<LoadedConversation | null> {
    // One snapshot (repeatable read), so the messages, checkpoints and summary agree with each other.
    return db.transaction(
      async (tx) => {
        const [row] = await tx.select(conversationColumns).from(conversations).where(owned(id, agentId));
        if (!row) return null;
        const messageRows = await tx.select().from(messages).where(eq(messages.conversationId, id)).orderBy(asc(messages.seq));
        const checkpointRows = await tx.select().from(checkpoints).where(eq(checkpoints.conversationId, id)).orderBy(asc(checkpoints.turn));
        const [summary] = await tx.select().from(conversationSummaries).where(eq(conversationSummaries.conversationId, id));
        const indexed = await tx
          .select({ turn: turns.turn })
          .from(turns)
          .where(and(eq(turns.conversationId, id), eq(turns.tenantId, tenantId)))
          .orderBy(asc(turns.turn));
        return {
          conversation: toConversation(row),
          messages: messageRows.map(
            (r): StoredMessage => ({ seq: r.seq, turn: r.turn, message: toChatMessage(r), metadata: r.metadata, createdAt: r.createdAt }),
          ),
          checkpoints: checkpointRows.map(({ conversationId: _c, source, ...c }) => ({ ...c, source: source === 'llm' ? 'llm' : 'rules' })),
          summary: summary
            ? { fromTurn: summary.fromTurn, throughTurn: summary.throughTurn, layers: summary.layers as SummaryLayer[], updatedAt: summary.updatedAt }
            : null,
          indexedTurns: indexed.map((r) => r.turn),
        };
      },
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
  }

  async function list(opts: { agentId: string; userId?: string; limit?: number; cursor?: string }): Promise<ConversationPage> {
    const limit = opts.limit ?? 50;
    // A delegation's conversation belongs to its lead's run, not to the user's list.
    const conditions = [ofTenant, eq(conversations.agentId, opts.agentId), isNull(conversations.parentConversationId)];
    if (opts.userId !== undefined) conditions.push(eq(conversations.userId, opts.userId));
    if (opts.cursor) {
      const { createdAt, id } = decodeCursor(opts.cursor);
      const at = sql`${createdAt}::timestamptz`;
      conditions.push(or(lt(conversations.createdAt, at), and(eq(conversations.createdAt, at), lt(conversations.id, id)))!);
    }
    const rows = await db
      .select({ row: conversationColumns, createdAtText: sql<string>`${conversations.createdAt}::text` })
      .from(conversations)
      .where(and(...conditions))
      .orderBy(desc(conversations.createdAt), desc(conversations.id))
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map((r) => toConversation(r.row)),
      nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAtText, id: last.row.id }) : null,
    };
  }

  async function appendTurn(input: { id: string; agentId: string; userId?: string | null; messages: NewMessage[] }): Promise<AppendedTurn> {
    if (input.messages.length === 0) throw new RangeError('a turn has at least one message');
    const userId = input.userId ?? '';
    const count = input.messages.length;
    // Numbered relative to the turn's first message; the statement adds the conversation's count.
    const rows = input.messages.map((entry, i) => {
      const { conversationId: _id, seq: _seq, turn: _turn, ...row } = toRow(input.id, i + 1, 0, entry);
      return { position: i + 1, ...row };
    });
    // One statement, so a turn costs one round trip: the upsert's row lock orders concurrent turns
    // of one conversation (each gets the next numbers), and the messages go in with the counts or
    // not at all. An id another tenant, agent or user holds fails the upsert's condition: no row
    // comes back, and nothing is appended.
    const [row] = await queryRows<ConversationRow & { created: boolean }>(
      db,
      sql`WITH c AS (
            INSERT INTO conversations (id, tenant_id, agent_id, user_id, title, turn_count, message_count)
            VALUES (${input.id}, ${tenantId}, ${input.agentId}, ${userId}, ${titleOf(input.messages)}, 1, ${count}::int)
            ON CONFLICT (id) DO UPDATE
              SET turn_count = conversations.turn_count + 1, message_count = conversations.message_count + excluded.message_count, updated_at = now()
              WHERE conversations.tenant_id = excluded.tenant_id AND conversations.agent_id = excluded.agent_id AND conversations.user_id = excluded.user_id
            RETURNING *, xmax = 0 AS created
          ), m AS (
            INSERT INTO messages (conversation_id, seq, turn, role, content, tool_calls, tool_call_id, is_error, metadata)
            SELECT c.id, c.message_count - ${count}::int + v.position, c.turn_count, v.role, v.content,
              coalesce(v."toolCalls", '[]'::jsonb), v."toolCallId", coalesce(v."isError", false), coalesce(v.metadata, '{}'::jsonb)
            FROM c CROSS JOIN jsonb_to_recordset(${JSON.stringify(rows, wellFormed)}::jsonb)
              AS v(position int, role text, content text, "toolCalls" jsonb, "toolCallId" text, "isError" boolean, metadata jsonb)
          )${linkImages(tenantId, input.messages)}
          SELECT id, agent_id AS "agentId", user_id AS "userId", title, turn_count AS "turnCount", message_count AS "messageCount",
            created_at AS "createdAt", updated_at AS "updatedAt", created
          FROM c`,
    );
    if (!row) throw new ConversationNotFoundError(input.id, input.agentId);
    // A raw statement's timestamps come back as text on both drivers.
    const { created, ...conversation } = { ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) };
    const firstSeq = conversation.messageCount - count + 1;
    return { conversation: toConversation(conversation), turn: conversation.turnCount, firstSeq, lastSeq: conversation.messageCount, created };
  }

  /** `SELECT id FROM conversations` of this tenant: a checkpoint or summary is only written under one. */
  const tenantConversation = (id: string) => sql`SELECT c.id FROM conversations c WHERE c.id = ${id} AND c.tenant_id = ${tenantId}`;

  async function saveCheckpoint(conversationId: string, checkpoint: TurnCheckpoint): Promise<boolean> {
    const c = checkpointValues(conversationId, checkpoint);
    try {
      // One statement, so the conversation cannot change tenant or vanish between the check and the write.
      const rows = await queryRows(
        db,
        sql`INSERT INTO checkpoints (conversation_id, turn, first_seq, last_seq, question, summary, actionable_summary, source)
          SELECT t.id, ${c.turn}::int, ${c.firstSeq}::int, ${c.lastSeq}::int, ${c.question}, ${c.summary}, ${c.actionableSummary}, ${c.source}
          FROM (${tenantConversation(conversationId)}) t
          ON CONFLICT DO NOTHING RETURNING turn`,
      );
      return rows.length > 0;
    } catch (error) {
      // Deleted while its checkpoint was being written: nothing left to checkpoint.
      if (isForeignKeyViolation(error)) return false;
      throw error;
    }
  }

  async function saveSummary(conversationId: string, summary: StructuralSummary): Promise<boolean> {
    try {
      const rows = await queryRows(
        db,
        sql`INSERT INTO conversation_summaries (conversation_id, from_turn, through_turn, layers)
          SELECT t.id, ${summary.fromTurn}::int, ${summary.throughTurn}::int, ${JSON.stringify(summary.layers)}::jsonb
          FROM (${tenantConversation(conversationId)}) t
          ON CONFLICT (conversation_id) DO UPDATE
            SET from_turn = excluded.from_turn, through_turn = excluded.through_turn, layers = excluded.layers, updated_at = now()
            -- Two turns compacting at once: the summary reaching further wins, whatever the order.
            WHERE conversation_summaries.through_turn <= excluded.through_turn
          RETURNING conversation_id`,
      );
      return rows.length > 0;
    } catch (error) {
      if (isForeignKeyViolation(error)) return false;
      throw error;
    }
  }

  async function del(id: string, agentId: string): Promise<boolean> {
    return db.transaction(async (tx) => {
      // Looked up first without a lock: a missing id writes nothing (not even the turns corpus's
      // statistics row), and the turns corpus lock is taken before any row lock, as its writers do.
      const [found] = await tx.select({ id: conversations.id }).from(conversations).where(owned(id, agentId));
      if (!found) return false;
      await deleteConversationTurns(tx, tenantId, id);
      const images = await attachmentsOf(tx, [id]);
      const rows = await tx.delete(conversations).where(owned(id, agentId)).returning({ id: conversations.id });
      // Its images go with it, but those another conversation of the tenant keeps too.
      if (images.length > 0) await deleteUnkeptAttachments(tx, tenantId, images);
      return rows.length > 0;
    });
  }

  async function exportConversation(id: string, agentId: string): Promise<ConversationExport | null> {
    const loaded = await load(id, agentId);
    if (!loaded) return null;
    const { conversation } = loaded;
    return {
      format: 'memrag.conversation',
      version: 1,
      conversation: {
        id: conversation.id,
        agentId: conversation.agentId,
        userId: conversation.userId,
        title: conversation.title,
        createdAt: conversation.createdAt.toISOString(),
        updatedAt: conversation.updatedAt.toISOString(),
      },
      messages: loaded.messages.map(toExportMessage),
      checkpoints: loaded.checkpoints.map(({ createdAt: _c, ...c }) => c),
      summary: loaded.summary ? { fromTurn: loaded.summary.fromTurn, throughTurn: loaded.summary.throughTurn, layers: loaded.summary.layers } : null,
    };
  }

  return { get, ownedByOther, load, list, appendTurn, saveCheckpoint, saveSummary, delete: del, export: exportConversation, import: importConversation };
}
