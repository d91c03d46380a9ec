import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createPgAttachmentStore } from '../../src/conversations/attachment-store.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { type DecodedImage, decodeImageDataUrl } from '../../src/llm/image-data.js';
import { createPgRunStore } from '../../src/runs/pg-run-store.js';
import { sweepRuns } from '../../src/runs/run-sweeper.js';
import { describeOnDrivers } from '../support/database-drivers.js';

/**
 * Images stored before a turn that then failed, was cancelled or expired were kept by nothing and
 * never deleted (a user's erasure finds only a named user's). The runs sweep deletes them once
 * older than a run lives; and a stored turn's images are linked in the append itself, so a stored
 * message never names an image the sweep may take.
 */

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const image = (n: number): DecodedImage => {
  const decoded = decodeImageDataUrl(`data:image/png;base64,${Buffer.concat([PNG, Buffer.from([n])]).toString('base64')}`, 1_000_000);
  if ('problem' in decoded) throw new Error(decoded.problem);
  return decoded;
};
const HOUR = 3_600_000;

describeOnDrivers('unlinked images were never removed', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    await database.db.execute(sql`DELETE FROM conversations`);
    await database.db.execute(sql`DELETE FROM attachments`);
    await database.db.execute(sql`DELETE FROM runs`);
  });

  const age = (id: string, ms: number) =>
    database.db.execute(sql`UPDATE attachments SET created_at = now() - make_interval(secs => ${ms / 1000}) WHERE id = ${id}`);
  const ids = async () => (await queryRows<{ id: string }>(database.db, sql`SELECT id FROM attachments ORDER BY id`)).map((r) => r.id).sort();

  it('deletes an image no conversation keeps once older than a run lives, and keeps linked, recent and waiting-run ones', async () => {
    const store = createPgAttachmentStore({ db: database.db, tenantId: 'alpha' });
    const [orphan, linked, recent, waiting, otherTenant] = [
      ...(await store.put([image(1), image(2), image(3), image(4)], null)),
      ...(await createPgAttachmentStore({ db: database.db, tenantId: 'beta' }).put([image(5)], null)),
    ];
    // A stored turn keeps its image: the append links it.
    await createPgConversationStore({ db: database.db, tenantId: 'alpha' }).appendTurn({
      id: randomUUID(),
      agentId: 'a',
      userId: null,
      messages: [{ message: { role: 'user', content: 'Look', images: [{ attachmentId: linked!.id, mediaType: 'image/png' }] } }],
    });
    // A paused run's state names its question's image until it is answered or expires.
    const runs = createPgRunStore({ db: database.db, tenantId: 'alpha' });
    const runId = randomUUID();
    await runs.create({ id: runId, agentId: 'a', userId: null, conversationId: randomUUID(), agentVersion: null, status: 'running' });
    await database.db.execute(
      sql`UPDATE runs SET status = 'paused', expires_at = now() + interval '1 hour',
            state = ${JSON.stringify({ request: { message: 'Look', images: [{ attachmentId: waiting!.id }] } })}::jsonb WHERE id = ${runId}`,
    );
    for (const a of [orphan, linked, waiting, otherTenant]) await age(a!.id, 2 * HOUR);

    const sweep = await sweepRuns(database.db, { lostAfterMs: HOUR });
    expect(sweep.attachments).toBe(2);
    expect(await ids()).toEqual([linked!.id, recent!.id, waiting!.id].sort());

    // Expired, the run names nothing any more: its image goes with the next sweep.
    await database.db.execute(sql`UPDATE runs SET expires_at = now() - interval '1 second' WHERE id = ${runId}`);
    expect(await sweepRuns(database.db, { lostAfterMs: HOUR })).toMatchObject({ expired: 1, attachments: 1 });
    expect(await ids()).toEqual([linked!.id, recent!.id].sort());
  });

  it('restarts an image’s age when a turn stores it again, so the sweep spares the turn about to link it', async () => {
    const store = createPgAttachmentStore({ db: database.db, tenantId: 'alpha' });
    const [first] = await store.put([image(7)], null);
    await age(first!.id, 2 * HOUR);
    const [again] = await store.put([image(7)], null);
    expect(again!.id).toBe(first!.id);
    expect((await sweepRuns(database.db, { lostAfterMs: HOUR })).attachments).toBe(0);
    expect(await ids()).toEqual([first!.id]);
  });

  it('links a turn’s images in the append itself: an append refused links nothing, one stored links each image once', async () => {
    const store = createPgAttachmentStore({ db: database.db, tenantId: 'alpha' });
    const [a, b] = await store.put([image(8), image(9)], null);
    const conversations = createPgConversationStore({ db: database.db, tenantId: 'alpha' });
    const id = randomUUID();
    await conversations.appendTurn({ id, agentId: 'a', userId: null, messages: [{ message: { role: 'user', content: 'First' } }] });
    // Another agent's append to the conversation is refused: no message stored, no image linked.
    await expect(
      conversations.appendTurn({
        id,
        agentId: 'other',
        userId: null,
        messages: [{ message: { role: 'user', content: 'Mine?', images: [{ attachmentId: a!.id }] } }],
      }),
    ).rejects.toThrow();
    const links = () =>
      queryRows<{ attachment_id: string }>(database.db, sql`SELECT attachment_id FROM conversation_attachments WHERE conversation_id = ${id}`);
    expect(await links()).toEqual([]);
    await conversations.appendTurn({
      id,
      agentId: 'a',
      userId: null,
      messages: [
        { message: { role: 'user', content: 'Both', images: [{ attachmentId: a!.id }, { attachmentId: b!.id }] } },
        { message: { role: 'assistant', content: null, toolCalls: [{ id: 'c', name: 'take_photo', arguments: '{}' }] } },
        { message: { role: 'tool', toolCallId: 'c', content: 'photo', images: [{ attachmentId: a!.id }] } },
      ],
    });
    expect((await links()).map((r) => r.attachment_id).sort()).toEqual([a!.id, b!.id].sort());
    // An id that names no stored image (erased meanwhile) is left out, the turn stored all the same.
    await conversations.appendTurn({
      id,
      agentId: 'a',
      userId: null,
      messages: [{ message: { role: 'user', content: 'Gone', images: [{ attachmentId: randomUUID() }] } }],
    });
    expect(await links()).toHaveLength(2);
    // Another tenant's image is never linked to this tenant's conversation.
    const [foreign] = await createPgAttachmentStore({ db: database.db, tenantId: 'beta' }).put([image(10)], null);
    await conversations.appendTurn({
      id,
      agentId: 'a',
      userId: null,
      messages: [{ message: { role: 'user', content: 'Theirs', images: [{ attachmentId: foreign!.id }] } }],
    });
    expect(await links()).toHaveLength(2);
  });
});
