import { randomUUID } from 'node:crypto';
import { readsRunConcurrently } from '../db/concurrent-reads.js';
import type { Db, Tx } from '../db/database.js';
import { checkpoints, conversationSummaries, conversations, messages } from '../db/schema/index.js';
import type { AfterBulkWrite } from '../db/table-statistics.js';
import { GroupCommit } from '../util/group-commit.js';
import type { Conversation, ConversationExport, ConversationStore } from './conversation-types.js';
import { type MessageInsert, checkpointValues, conversationColumns, toConversation } from './conversation-rows.js';
import type { PreparedTurn, TurnIndex } from './turn-index.js';
import { turnRecords } from './turn-record.js';

/**
 * Imports of a tenant written in one transaction at most: enough that a burst of imports (a
 * benchmark's, a migration's) costs a few statements per group, few enough that a group's
 * transaction stays short and the term rows it updates last are soon free.
 */
const IMPORTS_PER_TRANSACTION = 32;

/**
 * A tenant's import transactions at once on a server, where each has a connection of its own:
 * while one waits on the server (its turns' graph inserts, its postings) the next is built and
 * sent. On PGlite one connection runs one transaction at a time, so imports write one group at once.
 */
const IMPORT_WRITERS = 2;

/**
 * Messages an import (or a group of them) writes at least to bring planner statistics up to date
 * at once (`afterBulkWrite`): the check reads the catalog and VACUUMs each table grown by a tenth,
 * which after every small import cost more than the import itself (a LongMemEval session).
 */
const BULK_IMPORT_MESSAGES = 1_000;

/** An import embedded and waiting for its transaction. */
interface QueuedImport {
  id: string;
  agentId: string;
  userId: string | null;
  data: ConversationExport;
  rows: MessageInsert[];
  prepared: PreparedTurn[];
}

/** Per database handle: the imports of every store of a tenant on it are grouped together. */
const importCommits = new WeakMap<Db, GroupCommit<QueuedImport, Conversation>>();

export interface ConversationImportOptions {
  db: Db;
  /** The tenant the imported conversations go to. */
  tenantId: string;
  /** The tenant's turns corpus, which indexes imported turns in the import's transaction. */
  turnIndex?: TurnIndex;
  /** Called after a large import commits, to bring planner statistics up to date. */
  afterBulkWrite?: AfterBulkWrite;
}

/**
 * The store's `import` for one tenant: imports are embedded as they come and written in groups,
 * a group (of every store of the tenant on the same database handle) in one transaction.
 */
export function createConversationImport(options: ConversationImportOptions): ConversationStore['import'] {
  const { db, tenantId, turnIndex } = options;

  async function importConversation(
    data: ConversationExport,
    agentId: string,
    userIdOverride?: string | null,
    importOptions: { id?: string } = {},
  ): Promise<Conversation> {
    const id = importOptions.id ?? randomUUID();
    const userId = userIdOverride !== undefined ? userIdOverride : (data.conversation.userId ?? null);
    // A message without a time is stored at the import's.
    const importedAt = new Date();
    const rows: MessageInsert[] = data.messages.map((m) => ({
      conversationId: id,
      seq: m.seq,
      turn: m.turn,
      role: m.role,
      content: m.content,
      toolCalls: m.role === 'assistant' ? (m.toolCalls ?? []) : [],
      toolCallId: m.role === 'tool' ? (m.toolCallId ?? null) : null,
      isError: m.role === 'tool' && m.isError === true,
      metadata: m.metadata ?? {},
      createdAt: m.createdAt ? new Date(m.createdAt) : importedAt,
    }));
    // Embedded before the transaction (see TurnIndex.prepare), while an earlier import writes;
    // written in it, so an imported conversation is recalled as soon as the import answers, and
    // a failure stores neither.
    const prepared = turnIndex
      ? await turnIndex.prepare(
          turnRecords(rows.map((r) => ({ turn: r.turn, role: r.role as 'user' | 'assistant' | 'tool', content: r.content ?? null, createdAt: r.createdAt! }))),
        )
      : [];
    const queued: QueuedImport = { id, agentId, userId, data, rows, prepared };
    let commits = importCommits.get(db);
    if (!commits) importCommits.set(db, (commits = new GroupCommit(IMPORTS_PER_TRANSACTION, readsRunConcurrently(db) ? IMPORT_WRITERS : 1)));
    return commits.run(`${tenantId}\u0000${turnIndex ? 'indexed' : 'unindexed'}`, queued, writeImports);
  }

  /** Imports in one transaction: one insert per table for all of them. */
  async function writeImports(items: readonly QueuedImport[]): Promise<Conversation[]> {
    const inTransaction = <T>(work: (tx: Tx) => Promise<T>) => (turnIndex ? turnIndex.transaction(work) : db.transaction(work));
    const imported = await inTransaction(async (tx) => {
      const inserted = await tx
        .insert(conversations)
        .values(
          items.map(({ id, agentId, userId, data, rows }) => ({
            id,
            tenantId,
            agentId,
            userId: userId ?? '',
            title: data.conversation.title,
            turnCount: data.messages.reduce((n, m) => Math.max(n, m.turn), 0),
            messageCount: rows.length,
            createdAt: new Date(data.conversation.createdAt),
            updatedAt: new Date(data.conversation.updatedAt),
          })),
        )
        .returning(conversationColumns);
      // In slices: a long conversation would pass Postgres's 65,535 bind parameters in one insert.
      const messageRows = items.flatMap((item) => item.rows);
      for (let i = 0; i < messageRows.length; i += 1_000) await tx.insert(messages).values(messageRows.slice(i, i + 1_000));
      const checkpointRows = items.flatMap(({ id, data }) => data.checkpoints.map((c) => checkpointValues(id, c)));
      for (let i = 0; i < checkpointRows.length; i += 1_000) await tx.insert(checkpoints).values(checkpointRows.slice(i, i + 1_000));
      const summaries = items.flatMap(({ id, data }) =>
        data.summary ? [{ conversationId: id, fromTurn: data.summary.fromTurn, throughTurn: data.summary.throughTurn, layers: data.summary.layers }] : [],
      );
      if (summaries.length > 0) await tx.insert(conversationSummaries).values(summaries);
      if (turnIndex)
        await turnIndex.write(
          tx,
          items.map(({ id, agentId, userId, prepared }) => ({ owner: { conversationId: id, agentId, userId }, prepared })),
        );
      const byId = new Map(inserted.map((row) => [row.id, row]));
      return items.map((item) => toConversation(byId.get(item.id)!));
    });
    // Planner statistics after an import large enough to change plans alone; a stream of small
    // ones is left to the periodic check, which would otherwise run (and VACUUM) after each.
    if (items.reduce((n, item) => n + item.rows.length, 0) >= BULK_IMPORT_MESSAGES) await options.afterBulkWrite?.();
    return imported;
  }

  return importConversation;
}
