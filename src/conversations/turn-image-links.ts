import { type SQL, sql } from 'drizzle-orm';
import { uuidArray } from '../db/sql-arrays.js';
import type { NewMessage } from './conversation-types.js';
import { attachmentIdsOf } from './image-refs.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The appended turn's images linked to its conversation in the append's own statement: a stored
 * message never names an image its conversation does not keep (which the unkept-attachment sweep
 * would delete). The rows are locked against an erasure running meanwhile; one erased before is
 * left out, and the message's reference to it then loads nothing. What it returns continues the
 * append's WITH, after its `c` (the conversation's row); nothing when the turn has no images.
 */
export function linkImages(tenantId: string, messages: readonly NewMessage[]): SQL {
  const ids = [...new Set(messages.flatMap((m) => (m.message.role === 'user' || m.message.role === 'tool' ? attachmentIdsOf(m.message.images) : [])))];
  const valid = ids.filter((id) => UUID.test(id));
  if (valid.length === 0) return sql``;
  return sql`, kept AS (
            SELECT id FROM attachments WHERE tenant_id = ${tenantId} AND id = ANY(${uuidArray(valid)}) FOR KEY SHARE
          ), l AS (
            INSERT INTO conversation_attachments (conversation_id, attachment_id)
            SELECT c.id, kept.id FROM c CROSS JOIN kept
            ON CONFLICT DO NOTHING
          )`;
}
