import type { BlockTemplate } from './block-fields.js';

/** Where a block lives: an agent's (no user), a user's (no agent), or an agent's view of a user. Null is "none". */
export interface BlockScope {
  agentId: string | null;
  userId: string | null;
}

export interface Block extends BlockScope {
  label: string;
  value: string;
  description: string | null;
  /** Characters the value may hold. */
  limit: number;
  readOnly: boolean;
  schema: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What a caller sets on a block; unset fields take their defaults (a new block) or are replaced by them (PUT). */
export interface BlockInput {
  value: string;
  description?: string | null;
  limit?: number;
  readOnly?: boolean;
  schema?: Record<string, unknown> | null;
}

/**
 * Who changed a block: the API, the model in a run (with its tool, and the turn's user: erasing
 * that user erases the write from a shared block's history too), an agent's template, an import.
 * A write the firewall held keeps its tool's `arguments`, to be made again at approval; that
 * approval (`approves` the held event) names the held write's user.
 */
export type BlockActor =
  | { type: 'api'; approves?: number; userId?: string }
  | { type: 'model'; runId: string; conversationId: string; tool: string; userId?: string; arguments?: Record<string, unknown> }
  | { type: 'template'; agentVersion: number | null }
  | { type: 'import' };

export type BlockEventType = 'written' | 'deleted' | 'quarantined' | 'approved';

/** One change of a block, with the block as it left it (a quarantined write: as it would have). */
export interface BlockEvent extends BlockScope {
  id: number;
  label: string;
  event: BlockEventType;
  value: string | null;
  description: string | null;
  limit: number | null;
  readOnly: boolean | null;
  schema: Record<string, unknown> | null;
  /** `quarantined`: held by the firewall, not applied; `approved`: held, then applied by a person. */
  status: 'applied' | 'quarantined' | 'approved';
  quarantineReasons: string[];
  actor: BlockActor;
  at: Date;
}

/** A refused write: `field` names what was wrong, as a route's 400 and a tool's error say. */
export class BlockWriteError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'BlockWriteError';
  }
}

/** A held write that can no longer be made to the block as it is now: nothing is changed. */
export class BlockConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlockConflictError';
  }
}

/** A block, or a quarantined event, that is not there. */
export class BlockNotFoundError extends Error {
  constructor(
    readonly label: string,
    message = `No block '${label}' in this scope`,
  ) {
    super(message);
    this.name = 'BlockNotFoundError';
  }
}

/** How a model's write changes a block's value; throws a BlockWriteError to refuse it. */
export type BlockEdit = (block: Block) => string;

/** A model's call of a block tool: the edit is made from it, so a held write can be made again at approval. */
export interface BlockCall {
  tool: 'block_append' | 'block_replace' | 'block_rewrite' | 'block_update_json';
  arguments: Record<string, unknown>;
}

export interface ModelWrite {
  agentId: string;
  userId: string | null;
  /** The tool call, which names the block and the edit; the firewall screens the words it writes. */
  call: BlockCall;
  actor: { type: 'model'; runId: string; conversationId: string };
  /** The tool's: aborted (timed out, the turn aborted), the write is rolled back rather than applied. */
  signal?: AbortSignal | undefined;
}

export interface ModelWriteResult {
  block: Block;
  /** `quarantined`: the firewall held the write; the block is unchanged. */
  status: 'applied' | 'quarantined';
  reasons: string[];
}

export interface BlockHistoryPaging {
  limit?: number | undefined;
  before?: number | undefined;
}

export interface BlockHistoryPage {
  events: BlockEvent[];
  nextBefore: number | null;
}

export interface BlockStore {
  put(label: string, scope: BlockScope, input: BlockInput, actor: BlockActor): Promise<{ block: Block; created: boolean }>;
  get(label: string, scope: BlockScope, asOf?: Date): Promise<Block | null>;
  list(scope: BlockScope): Promise<Block[]>;
  delete(label: string, scope: BlockScope, actor: BlockActor): Promise<boolean>;
  /**
   * The newest `limit` events of the label in the scope older than event `before`, oldest first,
   * and the `before` of the page older still (null: none); kept after a delete.
   */
  history(label: string, scope: BlockScope, page?: BlockHistoryPaging): Promise<BlockHistoryPage>;
  /** The blocks a turn of `agentId` with `userId` sees: (A, none), (none, U), (A, U), each by label. */
  visible(agentId: string, userId: string | null): Promise<Block[]>;
  /**
   * A model's write to the most specific block with its label the turn sees, under the block's row
   * lock (concurrent writes take turns); screened by the firewall when it screens the model.
   */
  modelWrite(write: ModelWrite): Promise<ModelWriteResult>;
  /**
   * Makes a quarantined write (by its event id) again, to the block's value as it is now; a
   * BlockConflictError when its edit no longer applies or fits.
   */
  approve(label: string, eventId: number, scope: BlockScope): Promise<Block>;
  /** Makes the (A, U) blocks of `templates`' user-scope ones that the user never had. */
  instantiateUserTemplates(agentId: string, userId: string, templates: readonly BlockTemplate[]): Promise<void>;
}
