import type { ChatMessage } from '../llm/messages.js';
import type { StructuralSummary } from '../compaction/structural-summary.js';
import type { TurnCheckpoint } from '../compaction/turn-checkpoint.js';

export interface Conversation {
  id: string;
  agentId: string;
  /** The user the conversation is with, fixed by its first turn; null when none was named. */
  userId: string | null;
  title: string;
  turnCount: number;
  messageCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface StoredMessage {
  seq: number;
  turn: number;
  message: ChatMessage;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export interface StoredCheckpoint extends TurnCheckpoint {
  createdAt: Date;
}

export interface StoredSummary extends StructuralSummary {
  updatedAt: Date;
}

/** Everything a turn needs to rebuild and compact its prompt, read in one go. */
export interface LoadedConversation {
  conversation: Conversation;
  messages: StoredMessage[];
  checkpoints: StoredCheckpoint[];
  summary: StoredSummary | null;
  /** The turns the turns corpus holds (episodic recall): the turn-index hook backfills the others. */
  indexedTurns: number[];
}

export interface ConversationPage {
  items: Conversation[];
  nextCursor: string | null;
}

export interface NewMessage {
  message: ChatMessage;
  metadata?: Record<string, unknown>;
}

export interface AppendedTurn {
  conversation: Conversation;
  turn: number;
  firstSeq: number;
  lastSeq: number;
  /** The turn's first message started the conversation. */
  created: boolean;
}

/** A conversation as `export` writes it and `import` reads it back. */
export interface ConversationExport {
  format: 'memrag.conversation';
  version: 1;
  conversation: { id: string; agentId: string; userId?: string | null; title: string; createdAt: string; updatedAt: string };
  messages: Array<{
    seq: number;
    turn: number;
    role: 'user' | 'assistant' | 'tool';
    content: string | null;
    toolCalls?: Array<{ id: string; name: string; arguments: string }>;
    toolCallId?: string;
    isError?: boolean;
    metadata?: Record<string, unknown>;
    createdAt?: string;
  }>;
  checkpoints: TurnCheckpoint[];
  summary: StructuralSummary | null;
}

/**
 * Also for an id another agent or another tenant owns: an agent can neither read nor continue
 * another's conversation. Continuing one with another user than its own is refused alike.
 */
export class ConversationNotFoundError extends Error {
  constructor(
    readonly id: string,
    readonly agentId: string,
  ) {
    super(`No conversation ${JSON.stringify(id)} for agent ${JSON.stringify(agentId)}`);
    this.name = 'ConversationNotFoundError';
  }
}

/** The conversations of one tenant (see `TenantScoped`): no method reads or writes another tenant's. */
export interface ConversationStore {
  get(id: string, agentId: string): Promise<Conversation | null>;
  /**
   * True when `id` names a conversation that is not this agent's in this tenant (another agent's,
   * or any conversation of another tenant): such an id can be neither read nor continued. False
   * when it is this agent's, or free. With `userId` (null: no user), a conversation of this agent
   * with another user counts as another's too: it cannot be continued by this one.
   */
  ownedByOther(id: string, agentId: string, userId?: string | null): Promise<boolean>;
  load(id: string, agentId: string): Promise<LoadedConversation | null>;
  /** Newest first; with `userId`, that user's only. */
  list(options: { agentId: string; userId?: string; limit?: number; cursor?: string }): Promise<ConversationPage>;
  /**
   * Appends one turn's messages (creating the conversation on its first turn, with `userId`), in
   * one transaction. Throws ConversationNotFoundError when another agent owns the id, or when the
   * conversation is another user's (null: a conversation without one).
   */
  appendTurn(input: { id: string; agentId: string; userId?: string | null; messages: NewMessage[] }): Promise<AppendedTurn>;
  /** Stores a turn's checkpoint unless it has one already; false when it had, or the conversation is gone. */
  saveCheckpoint(conversationId: string, checkpoint: TurnCheckpoint): Promise<boolean>;
  /** Stores the structural summary unless a stored one already reaches further; false when not stored. */
  saveSummary(conversationId: string, summary: StructuralSummary): Promise<boolean>;
  delete(id: string, agentId: string): Promise<boolean>;
  export(id: string, agentId: string): Promise<ConversationExport | null>;
  /**
   * Stores an exported conversation under a new id for `agentId` and `userId` (default: the
   * export's), in one transaction, its turns indexed for recall in it too. `options.id` keeps an
   * id (a tenant export's): the caller checks it is free, and a taken one fails the insert.
   */
  import(data: ConversationExport, agentId: string, userId?: string | null, options?: { id?: string }): Promise<Conversation>;
}
