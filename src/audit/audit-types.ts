import type { Db } from '../db/database.js';
import type { Page } from '../retrieval/page.js';

/**
 * Who did an audited action: an API key (its id as the rate limiter names it, `env:1` or
 * `key:<uuid>`, and its name when it has one), anyone on a server run without keys, or an
 * operator's command run on the database itself (`npm run keys`).
 */
export type AuditActor = { type: 'api_key'; keyId: string; name: string | null } | { type: 'open' } | { type: 'command'; command: string };

/**
 * The actions the log records: every admin operation that changes or takes out data (erasure,
 * export, import, key management, agent deletion) and every deletion made through the API.
 * Reading the log itself is not one: a log that recorded its reads would change with each look.
 */
export const AUDIT_ACTIONS = [
  'user.erased',
  'agent.deleted',
  'memory.deleted',
  'memories.deleted',
  'conversation.deleted',
  'document.deleted',
  'tenant.exported',
  'tenant.imported',
  'key.created',
  'key.revoked',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One recorded action: who, about which user, and figures; never the content it was about. */
export interface AuditEntry {
  id: number;
  action: AuditAction;
  /** The user the action was about; null for none. */
  userId: string | null;
  actor: AuditActor;
  details: Record<string, unknown>;
  at: Date;
}

export interface NewAuditEntry {
  action: AuditAction;
  userId: string | null;
  actor: AuditActor;
  details: Record<string, unknown>;
}

export interface ListAuditOptions {
  /** Only the entries about this user. */
  userId?: string;
  /** Only the entries of this action. */
  action?: AuditAction;
  limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
}

/** One tenant's audit log: entries are added and their figures brought up to date, never deleted. */
export interface AuditLog {
  /** Adds an entry; with `tx`, in the caller's transaction. Returns its id. */
  record(entry: NewAuditEntry, tx?: Db): Promise<number>;
  /**
   * Merges `details` into the entry's (top-level keys replaced), in the caller's transaction when
   * given: figures that grow while an action runs commit with the work they count.
   */
  updateDetails(id: number, details: Record<string, unknown>, tx?: Db): Promise<void>;
  /** Newest first. */
  list(options?: ListAuditOptions): Promise<Page<AuditEntry>>;
}
