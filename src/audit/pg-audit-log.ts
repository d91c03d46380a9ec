import { and, desc, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { auditLog } from '../db/schema/index.js';
import { decodeCursor } from '../retrieval/cursor.js';
import { createdAtText, keysetPage } from '../retrieval/keyset-page.js';
import type { Page } from '../retrieval/page.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import type { AuditAction, AuditActor, AuditEntry, AuditLog, ListAuditOptions, NewAuditEntry } from './audit-types.js';

export interface PgAuditLogOptions {
  db: Db;
  /** The tenant whose entries this log writes and reads, and only those. Default `default`. */
  tenantId?: string;
}

/**
 * Entries are paged newest first by id, an identity: the order they were written in, and the
 * tenant's index (tenant_id, [user_id,] id) reads each page as one range. The cursor has the
 * shape of the other lists' (`keysetPage`); only its id is compared.
 */
const KEYSET = { createdAt: auditLog.at, id: auditLog.id };
const isEntryId = (id: string) => /^[1-9]\d{0,14}$/.test(id);
const afterEntry = (cursor: string | undefined) => (cursor ? lt(auditLog.id, Number(decodeCursor(cursor, isEntryId).id)) : undefined);

export function createPgAuditLog(options: PgAuditLogOptions): AuditLog {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;

  async function record(entry: NewAuditEntry, tx: Db = db): Promise<number> {
    const [row] = await tx
      .insert(auditLog)
      .values({ tenantId, action: entry.action, userId: entry.userId ?? '', actor: entry.actor, details: entry.details })
      .returning({ id: auditLog.id });
    return Number(row!.id);
  }

  async function updateDetails(id: number, details: Record<string, unknown>, tx: Db = db): Promise<void> {
    await tx
      .update(auditLog)
      .set({ details: sql`${auditLog.details} || ${JSON.stringify(details)}::jsonb` })
      .where(and(eq(auditLog.tenantId, tenantId), eq(auditLog.id, id)));
  }

  async function list(opts: ListAuditOptions = {}): Promise<Page<AuditEntry>> {
    const limit = opts.limit ?? 50;
    const rows = await db
      .select({
        id: sql<string>`${auditLog.id}::text`,
        createdAtText: createdAtText(KEYSET),
        action: auditLog.action,
        userId: auditLog.userId,
        actor: auditLog.actor,
        details: auditLog.details,
        at: auditLog.at,
      })
      .from(auditLog)
      .where(
        and(
          eq(auditLog.tenantId, tenantId),
          opts.userId === undefined ? undefined : eq(auditLog.userId, opts.userId),
          opts.action === undefined ? undefined : eq(auditLog.action, opts.action),
          afterEntry(opts.cursor),
        ),
      )
      .orderBy(desc(auditLog.id))
      .limit(limit + 1);
    return keysetPage(rows, limit, (r) => ({
      id: Number(r.id),
      action: r.action as AuditAction,
      userId: r.userId === '' ? null : r.userId,
      actor: r.actor as AuditActor,
      details: r.details,
      at: r.at,
    }));
  }

  return { record, updateDetails, list };
}
