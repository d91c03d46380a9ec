import { derivedUuid } from '../util/derived-uuid.js';
import { importAgent } from '../agents/agent-transfer.js';
import { importBlock } from '../blocks/block-transfer.js';
import type { ConversationStore } from '../conversations/conversation-types.js';
import type { Db } from '../db/database.js';
import type { DocumentStore } from '../documents/document-store.js';
import type { Embedder } from '../embeddings/embedder.js';
import { createMemoryImporter } from '../memory/memory-import.js';
import { importWorkflow } from '../workflows/workflow-transfer.js';
import type { AgentLine, BlockLine, ConversationLine, DocumentLine, ExportRecord, MemoryLine, WorkflowLine } from './export-lines.js';

export interface ImportCounts {
  memories: number;
  conversations: number;
  agents: number;
  documents: number;
  historyEvents: number;
  /** Working-memory blocks, each with its history. */
  blocks: number;
  /** Workflows, each with its versions; present when the file carried any. */
  workflows?: number;
}

export interface ImportReport {
  imported: ImportCounts;
  /** Records the tenant holds already (same memory scope and key, conversation id, agent id): left as they are. */
  skipped: number;
  /** 1-based line numbers (Mem0: the item's index) of records that could not be imported, and why. */
  errors: Array<{ line: number; message: string }>;
}

export interface TenantImportParts {
  db: Db;
  embedder: Embedder;
  tenantId: string;
  conversations: ConversationStore;
  documents: DocumentStore;
}

/** Memories embedded and written this many at a time: one embedder call and one transaction. */
export const IMPORT_MEMORY_BATCH = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An import into one tenant, fed record by record (each with its line number) and finished once:
 * memories are batched (see IMPORT_MEMORY_BATCH), conversations and agents written one by one.
 * A record that fails to write is reported with its line and the rest go on.
 */
export function createTenantImport(
  parts: TenantImportParts,
  options: {
    onProgress?: (report: ImportReport) => void;
    /**
     * A batch of memories that fails to write: `report` (the default) lists its lines in `errors`
     * and goes on; `throw` rethrows, for a job whose attempt is then retried.
     */
    batchFailure?: 'report' | 'throw';
  } = {},
) {
  const memories = createMemoryImporter({ db: parts.db, embedder: parts.embedder, tenantId: parts.tenantId });
  const report: ImportReport = { imported: { memories: 0, conversations: 0, agents: 0, documents: 0, historyEvents: 0, blocks: 0 }, skipped: 0, errors: [] };
  let pending: Array<{ line: number; record: MemoryLine }> = [];

  /**
   * The id a conversation of the file has in this tenant: its own, or one derived from it when
   * another tenant (or agent) holds it. Asked once per id, for the conversation and for the
   * memories drawn from it alike, so that their origins still lead to it (lineage, erasure).
   */
  const conversationIds = new Map<string, Promise<string>>();
  const importedConversationId = (id: string, agentId: string): Promise<string> => {
    const key = `${agentId}\u0000${id}`;
    let mapped = conversationIds.get(key);
    if (!mapped) {
      // Ids are one key space over every tenant: one another holds becomes an id derived from it
      // and this tenant, the same on every import, so importing again still finds it.
      mapped = UUID.test(id)
        ? parts.conversations.ownedByOther(id, agentId).then((other) => (other ? derivedUuid(`${parts.tenantId}\u0000${id}`) : id))
        : Promise.resolve(id);
      conversationIds.set(key, mapped);
    }
    return mapped;
  };

  async function withImportedConversations(memory: Omit<MemoryLine, 'type'>): Promise<Omit<MemoryLine, 'type'>> {
    const remap = async <T extends Record<string, unknown>>(o: T): Promise<T> =>
      typeof o.conversationId === 'string' ? { ...o, conversationId: await importedConversationId(o.conversationId, memory.agentId) } : o;
    return {
      ...memory,
      sources: await Promise.all(memory.sources.map(remap)),
      history: await Promise.all(
        memory.history.map(async (e) => ({ ...e, sources: e.sources && (await Promise.all(e.sources.map(remap))), actor: await remap(e.actor) })),
      ),
    };
  }

  async function flush(): Promise<void> {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    try {
      const written = await memories.import(await Promise.all(batch.map(({ record: { type: _type, ...memory } }) => withImportedConversations(memory))));
      report.imported.memories += written.imported;
      report.imported.historyEvents += written.historyEvents;
      report.skipped += written.skipped;
    } catch (error) {
      if (options.batchFailure === 'throw') throw error;
      for (const { line } of batch) report.errors.push({ line, message: (error as Error).message });
    }
    options.onProgress?.(report);
  }

  async function conversation(line: number, record: ConversationLine): Promise<void> {
    const { type: _type, ...rest } = record;
    const data = { format: 'memrag.conversation' as const, version: 1 as const, ...rest };
    const { agentId } = data.conversation;
    const id = await importedConversationId(data.conversation.id, agentId);
    if (await parts.conversations.get(id, agentId)) {
      report.skipped++;
      return;
    }
    try {
      await parts.conversations.import(data, agentId, data.conversation.userId ?? null, { id });
      report.imported.conversations++;
    } catch (error) {
      report.errors.push({ line, message: (error as Error).message });
    }
  }

  async function agent(line: number, record: AgentLine): Promise<void> {
    const { type: _type, ...exported } = record;
    try {
      if (await importAgent(parts.db, parts.tenantId, exported)) report.imported.agents++;
      else report.skipped++;
    } catch (error) {
      report.errors.push({ line, message: (error as Error).message });
    }
  }

  async function workflow(line: number, record: WorkflowLine): Promise<void> {
    const { type: _type, ...exported } = record;
    try {
      if (await importWorkflow(parts.db, parts.tenantId, exported)) report.imported.workflows = (report.imported.workflows ?? 0) + 1;
      else report.skipped++;
    } catch (error) {
      report.errors.push({ line, message: (error as Error).message });
    }
  }

  async function block(line: number, record: BlockLine): Promise<void> {
    const { type: _type, ...exported } = record;
    try {
      if ((await importBlock(parts.db, parts.tenantId, exported)).imported) report.imported.blocks++;
      else report.skipped++;
    } catch (error) {
      report.errors.push({ line, message: (error as Error).message });
    }
  }

  async function document(line: number, record: DocumentLine): Promise<void> {
    try {
      // Re-ingested from its extracted text: the same text is the same content hash, so a document
      // the tenant holds already is found `unchanged`. Its chunks, id and times are new.
      const { status } = await parts.documents.ingest({
        title: record.title,
        content: record.text,
        format: record.format === 'markdown' ? 'markdown' : 'text',
        tags: record.tags,
        metadata: record.metadata,
        source: record.source,
      });
      if (status === 'unchanged') report.skipped++;
      else report.imported.documents++;
    } catch (error) {
      report.errors.push({ line, message: (error as Error).message });
    }
  }

  return {
    report,
    /** A line that could not be read as a record: reported, not imported. */
    fail(line: number, message: string): void {
      report.errors.push({ line, message });
    },
    async add(line: number, record: ExportRecord): Promise<void> {
      if (record.type === 'memory') {
        pending.push({ line, record });
        if (pending.length >= IMPORT_MEMORY_BATCH) await flush();
        return;
      }
      if (record.type === 'conversation') await conversation(line, record);
      else if (record.type === 'agent') await agent(line, record);
      else if (record.type === 'block') await block(line, record);
      else if (record.type === 'workflow') await workflow(line, record);
      else await document(line, record);
    },
    /**
     * Says which records come after the ones added so far: their memories are embedded while the
     * current batch is written (the embedder works in its own threads), not after it.
     */
    lookAhead(records: readonly ExportRecord[]): void {
      const next = records.flatMap((record) => (record.type === 'memory' ? [record] : []));
      if (next.length > 0) memories.embedAhead(next.map(({ type: _type, ...memory }) => memory));
    },
    /** Writes the memories pending in the current batch now. */
    flush,
    async finish(): Promise<ImportReport> {
      await flush();
      report.errors.sort((a, b) => a.line - b.line);
      return report;
    },
  };
}
