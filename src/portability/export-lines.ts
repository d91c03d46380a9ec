import type { ExportedAgent } from '../agents/agent-transfer.js';
import type { ExportedBlock } from '../blocks/block-transfer.js';
import type { ConversationExport } from '../conversations/conversation-types.js';
import type { ExportedDocument } from '../documents/document-export.js';
import type { ExportedMemory } from '../memory/memory-export.js';
import type { ExportedWorkflow } from '../workflows/workflow-transfer.js';

/** The export's format name and version: an import refuses a file of any other. */
export const EXPORT_FORMAT = 'memrag.export';
export const EXPORT_VERSION = 1;

/** What an export covers: the tenant's data, narrowed to one agent and/or one user. */
export interface ExportScope {
  agentId?: string;
  userId?: string;
  /** Documents are left out unless asked for: they are the tenant's, not an agent's or a user's, and large. */
  include?: Array<'documents'>;
}

export interface ExportHeader {
  type: 'header';
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  exportedAt: string;
  scope: ExportScope;
}

export type MemoryLine = { type: 'memory' } & ExportedMemory;
/** A conversation as `GET /v1/conversations/{id}/export` writes it, without its own format and version. */
export type ConversationLine = { type: 'conversation' } & Omit<ConversationExport, 'format' | 'version'>;
export type AgentLine = { type: 'agent' } & ExportedAgent;
export type DocumentLine = { type: 'document' } & ExportedDocument;
/** A working-memory block with its history. */
export type BlockLine = { type: 'block' } & ExportedBlock;

/** A workflow with every version of its definition. */
export type WorkflowLine = { type: 'workflow' } & ExportedWorkflow;

/** One line of an export after its header, by `type`. */
export type ExportRecord = MemoryLine | ConversationLine | AgentLine | DocumentLine | BlockLine | WorkflowLine;
