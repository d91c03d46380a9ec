import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgAttachmentStore } from '../../src/conversations/attachment-store.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { decodeImageDataUrl, type DecodedImage } from '../../src/llm/image-data.js';
import { describeOnDrivers } from '../support/database-drivers.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const image = (n: number): DecodedImage => {
  const decoded = decodeImageDataUrl(`data:image/png;base64,${Buffer.concat([PNG, Buffer.from([n])]).toString('base64')}`, 1_000_000);
  if ('problem' in decoded) throw new Error(decoded.problem);
  return decoded;
};

describeOnDrivers('attachment store', (driver) => {
  describe('AttachmentStore contract', () => {
    let database: Database | undefined;
    beforeAll(async () => {
      database = await driver.open();
    });
    afterAll(async () => {
      await database?.close();
    });
    const db = () => database!.db;

    async function conversationOf(tenantId: string, userId: string | null = null): Promise<string> {
      const id = randomUUID();
      await createPgConversationStore({ db: db(), tenantId }).appendTurn({
        id,
        agentId: 'a',
        userId,
        messages: [{ message: { role: 'user', content: 'Hi' } }],
      });
      return id;
    }

    it('stores an image once per tenant by hash, and gives its bytes back byte for byte with their type', async () => {
      const store = createPgAttachmentStore({ db: db(), tenantId: 't1' });
      const [first] = await store.put([image(1)], null);
      const [again, other] = await store.put([image(1), image(2)], 'u');
      expect(again!.id).toBe(first!.id);
      expect(other!.id).not.toBe(first!.id);
      const conversationId = await conversationOf('t1');
      await store.link(conversationId, [first!.id, first!.id]);
      const read = await store.read(conversationId, first!.id);
      expect(read!.mediaType).toBe('image/png');
      expect(Buffer.from(read!.data).equals(image(1).data)).toBe(true);
      // Not linked to this conversation: not its.
      expect(await store.read(conversationId, other!.id)).toBeNull();
      const urls = await store.dataUrls([first!.id, other!.id]);
      expect(urls.get(other!.id)).toBe(`data:image/png;base64,${image(2).data.toString('base64')}`);
      expect([...(await store.dataUrls([first!.id, other!.id], conversationId)).keys()]).toEqual([first!.id]);
    });

    it("keeps tenants apart: another tenant's id reads as nothing, and the same bytes are stored apart", async () => {
      const alpha = createPgAttachmentStore({ db: db(), tenantId: 'alpha' });
      const beta = createPgAttachmentStore({ db: db(), tenantId: 'beta' });
      const [a] = await alpha.put([image(3)], null);
      const [b] = await beta.put([image(3)], null);
      expect(b!.id).not.toBe(a!.id);
      const alphaConversation = await conversationOf('alpha');
      const betaConversation = await conversationOf('beta');
      await alpha.link(alphaConversation, [a!.id]);
      // Beta cannot link alpha's image into its conversation, nor read it through either conversation.
      await beta.link(betaConversation, [a!.id]);
      expect(await beta.read(betaConversation, a!.id)).toBeNull();
      expect(await beta.read(alphaConversation, a!.id)).toBeNull();
      expect((await beta.dataUrls([a!.id])).size).toBe(0);
      expect(await alpha.read(alphaConversation, a!.id)).not.toBeNull();
    });

    it('goes with the last conversation that keeps it', async () => {
      const store = createPgAttachmentStore({ db: db(), tenantId: 't2' });
      const conversations = createPgConversationStore({ db: db(), tenantId: 't2' });
      const [shared, own] = await store.put([image(4), image(5)], null);
      const one = await conversationOf('t2');
      const two = await conversationOf('t2');
      await store.link(one, [shared!.id]);
      await store.link(two, [shared!.id, own!.id]);
      const left = async () =>
        (await queryRows<{ id: string }>(db(), sql`SELECT id FROM attachments WHERE tenant_id = 't2' ORDER BY id`)).map((r) => r.id).sort();
      expect(await conversations.delete(two, 'a')).toBe(true);
      expect(await left()).toEqual([shared!.id]);
      expect(await conversations.delete(one, 'a')).toBe(true);
      expect(await left()).toEqual([]);
    });

    it('links nothing to a conversation that is gone', async () => {
      const store = createPgAttachmentStore({ db: db(), tenantId: 't3' });
      const [stored] = await store.put([image(6)], null);
      await expect(store.link(randomUUID(), [stored!.id])).resolves.toBeUndefined();
      expect(await store.read(randomUUID(), 'not-a-uuid')).toBeNull();
    });
  });
});
