import { customType, index, integer, pgTable, primaryKey, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { conversations } from './conversations.js';
import { tenantIdColumn } from './tenant-id-column.js';

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' });

/**
 * An image sent in a chat message, stored once per tenant by its bytes' hash however many
 * messages (or conversations) carry it; a conversation reaches it through `conversation_attachments`.
 */
export const attachments = pgTable(
  'attachments',
  {
    id: uuid('id').primaryKey(),
    tenantId: tenantIdColumn(),
    /** Hex SHA-256 of `data`. */
    sha256: text('sha256').notNull(),
    mediaType: text('media_type').notNull(),
    byteSize: integer('byte_size').notNull(),
    data: bytea('data').notNull(),
    /** Who first sent it ('' when no user was named): a user's erasure takes what no other conversation keeps. */
    userId: text('user_id').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('attachments_tenant_sha256').on(t.tenantId, t.sha256), index('attachments_tenant_user_idx').on(t.tenantId, t.userId)],
);

/** Which conversation keeps which attachment: deleting the conversation drops its links (and the sweep the images left unkept). */
export const conversationAttachments = pgTable(
  'conversation_attachments',
  {
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    attachmentId: uuid('attachment_id')
      .notNull()
      .references(() => attachments.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.attachmentId] }), index('conversation_attachments_attachment_idx').on(t.attachmentId)],
);
