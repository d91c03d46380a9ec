import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/database.js';
import { isForeignKeyViolation } from '../db/foreign-key-violation.js';
import { queryRows } from '../db/query-rows.js';
import { attachments, conversationAttachments, conversations } from '../db/schema/index.js';
import { uuidArray } from '../db/sql-arrays.js';
import type { DecodedImage } from '../llm/image-data.js';
import { toDataUrl } from '../llm/image-data.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';

/** An image as stored: what a message's reference to it names. */
export interface StoredAttachment {
  id: string;
  sha256: string;
  mediaType: string;
}

export interface AttachmentContent {
  mediaType: string;
  data: Uint8Array;
}

/** The images of one tenant's conversations; no method reads or writes another tenant's. */
export interface AttachmentStore {
  /**
   * Stores the images (one row per distinct hash in the tenant, however often sent) before the
   * turn that carries them runs, so that a paused run keeps references rather than the bytes.
   */
  put(images: readonly DecodedImage[], userId: string | null): Promise<StoredAttachment[]>;
  /** Makes the images the conversation's (after its turn is stored); a conversation gone meanwhile links nothing. */
  link(conversationId: string, attachmentIds: readonly string[]): Promise<void>;
  /** One of the conversation's images; null when it is not this conversation's (or this tenant's). */
  read(conversationId: string, attachmentId: string): Promise<AttachmentContent | null>;
  /**
   * The tenant's images by id, as data URLs for the model; ids not found are left out. With
   * `conversationId`, only those that conversation keeps (a stored message names no other's).
   */
  dataUrls(attachmentIds: readonly string[], conversationId?: string): Promise<Map<string, string>>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createPgAttachmentStore(options: { db: Db; tenantId?: string }): AttachmentStore {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;

  async function put(images: readonly DecodedImage[], userId: string | null): Promise<StoredAttachment[]> {
    const stored: StoredAttachment[] = [];
    for (const image of images) {
      // The update makes RETURNING give the row that was there (one row per hash, its id kept), and
      // restarts its age: the sweep of images no conversation keeps spares one a turn is about to store.
      const [row] = await db
        .insert(attachments)
        .values({
          id: randomUUID(),
          tenantId,
          sha256: image.sha256,
          mediaType: image.mediaType,
          byteSize: image.data.length,
          data: image.data,
          userId: userId ?? '',
        })
        .onConflictDoUpdate({ target: [attachments.tenantId, attachments.sha256], set: { createdAt: sql`now()` } })
        .returning({ id: attachments.id, sha256: attachments.sha256, mediaType: attachments.mediaType });
      stored.push(row!);
    }
    return stored;
  }

  async function link(conversationId: string, attachmentIds: readonly string[]): Promise<void> {
    if (attachmentIds.length === 0) return;
    try {
      await db.execute(
        sql`INSERT INTO conversation_attachments (conversation_id, attachment_id)
          SELECT c.id, a.id FROM conversations c JOIN attachments a ON a.tenant_id = c.tenant_id
          WHERE c.id = ${conversationId} AND c.tenant_id = ${tenantId} AND a.id = ANY(${uuidArray([...new Set(attachmentIds)])})
          ON CONFLICT DO NOTHING`,
      );
    } catch (error) {
      // Deleted (or its image erased) while the turn was being stored: nothing left to link.
      if (!isForeignKeyViolation(error)) throw error;
    }
  }

  async function read(conversationId: string, attachmentId: string): Promise<AttachmentContent | null> {
    if (!UUID.test(attachmentId)) return null;
    const [row] = await db
      .select({ mediaType: attachments.mediaType, data: attachments.data })
      .from(conversationAttachments)
      .innerJoin(attachments, eq(attachments.id, conversationAttachments.attachmentId))
      .innerJoin(conversations, eq(conversations.id, conversationAttachments.conversationId))
      .where(
        and(
          eq(conversationAttachments.conversationId, conversationId),
          eq(conversationAttachments.attachmentId, attachmentId),
          eq(attachments.tenantId, tenantId),
          eq(conversations.tenantId, tenantId),
        ),
      );
    return row ?? null;
  }

  async function dataUrls(attachmentIds: readonly string[], conversationId?: string): Promise<Map<string, string>> {
    const ids = [...new Set(attachmentIds)].filter((id) => UUID.test(id));
    if (ids.length === 0) return new Map();
    const kept =
      conversationId === undefined
        ? sql`true`
        : sql`EXISTS (SELECT 1 FROM conversation_attachments l WHERE l.attachment_id = ${attachments.id} AND l.conversation_id = ${conversationId})`;
    const rows = await db
      .select({ id: attachments.id, mediaType: attachments.mediaType, data: attachments.data })
      .from(attachments)
      .where(and(eq(attachments.tenantId, tenantId), sql`${attachments.id} = ANY(${uuidArray(ids)})`, kept));
    return new Map(rows.map((r) => [r.id, toDataUrl(r.mediaType, r.data)]));
  }

  return { put, link, read, dataUrls };
}

/** The attachments the conversations keep, read before they are deleted (the links go with them). */
export async function attachmentsOf(tx: Db | Tx, conversationIds: readonly string[]): Promise<string[]> {
  if (conversationIds.length === 0) return [];
  const rows = await queryRows<{ id: string }>(
    tx as Db,
    sql`SELECT DISTINCT attachment_id AS id FROM conversation_attachments WHERE conversation_id = ANY(${uuidArray(conversationIds)})`,
  );
  return rows.map((r) => r.id);
}

/**
 * Deletes those of `ids` no conversation keeps any more, and (with `userId`) the ones that user
 * sent that no conversation keeps (a turn that failed before it was stored); returns how many.
 */
export async function deleteUnkeptAttachments(tx: Db | Tx, tenantId: string, ids: readonly string[], userId?: string): Promise<number> {
  const chosen = userId === undefined ? sql`a.id = ANY(${uuidArray(ids)})` : sql`(a.id = ANY(${uuidArray(ids)}) OR a.user_id = ${userId})`;
  const [row] = await queryRows<{ n: number }>(
    tx as Db,
    sql`WITH gone AS (
          DELETE FROM attachments a WHERE a.tenant_id = ${tenantId} AND ${chosen}
            AND NOT EXISTS (SELECT 1 FROM conversation_attachments l WHERE l.attachment_id = a.id)
          RETURNING 1)
        SELECT count(*)::int AS n FROM gone`,
  );
  return Number(row?.n ?? 0);
}
