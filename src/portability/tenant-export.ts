import { and, asc, eq, sql } from 'drizzle-orm';
import { exportAgents } from '../agents/agent-transfer.js';
import { exportBlocks } from '../blocks/block-transfer.js';
import type { ConversationStore } from '../conversations/conversation-types.js';
import type { Db } from '../db/database.js';
import { conversations } from '../db/schema/index.js';
import { exportDocuments } from '../documents/document-export.js';
import { exportMemories } from '../memory/memory-export.js';
import { exportWorkflows } from '../workflows/workflow-transfer.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportHeader, type ExportRecord, type ExportScope } from './export-lines.js';

export interface TenantExportParts {
  db: Db;
  tenantId: string;
  conversations: ConversationStore;
}

/**
 * A tenant's export, line by line: the header, then memories (by agent, user and key), agents
 * (by id), conversations (by id) and, when `include` names them, documents (by id), each kind
 * read a page at a time. The order depends only on
 * the data, so two exports of the same data are the same but for `exportedAt`.
 */
export async function* tenantExport(parts: TenantExportParts, scope: ExportScope, now = new Date()): AsyncGenerator<ExportHeader | ExportRecord> {
  yield { type: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: now.toISOString(), scope };
  for await (const memory of exportMemories(parts.db, parts.tenantId, scope)) yield { type: 'memory', ...memory };
  for await (const agent of exportAgents(parts.db, parts.tenantId, scope.agentId)) yield { type: 'agent', ...agent };
  // The tenant's, neither an agent's nor a user's: left out of an export narrowed to either.
  if (scope.agentId === undefined && scope.userId === undefined)
    for await (const workflow of exportWorkflows(parts.db, parts.tenantId)) yield { type: 'workflow', ...workflow };
  for await (const block of exportBlocks(parts.db, parts.tenantId, scope)) yield { type: 'block', ...block };
  for await (const { id, agentId } of conversationIds(parts.db, parts.tenantId, scope)) {
    // Deleted since its id was read: it is not part of the export.
    const exported = await parts.conversations.export(id, agentId);
    if (!exported) continue;
    const { format: _format, version: _version, ...rest } = exported;
    yield { type: 'conversation', ...rest };
  }
  if (scope.include?.includes('documents')) {
    for await (const document of exportDocuments(parts.db, parts.tenantId)) yield { type: 'document', ...document };
  }
}

async function* conversationIds(db: Db, tenantId: string, scope: ExportScope, pageSize = 200): AsyncGenerator<{ id: string; agentId: string }> {
  let after: string | undefined;
  for (;;) {
    const rows = await db
      .select({ id: conversations.id, agentId: conversations.agentId })
      .from(conversations)
      .where(
        and(
          eq(conversations.tenantId, tenantId),
          scope.agentId !== undefined ? eq(conversations.agentId, scope.agentId) : undefined,
          scope.userId !== undefined ? eq(conversations.userId, scope.userId) : undefined,
          after !== undefined ? sql`${conversations.id} > ${after}::uuid` : undefined,
        ),
      )
      .orderBy(asc(conversations.id))
      .limit(pageSize);
    yield* rows;
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.id;
  }
}
