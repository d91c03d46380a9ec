import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { sweepExpiredMemories } from '../../src/memory/memory-expiry-sweeper.js';
import type { MemoryStore } from '../../src/memory/memory-types.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import type { DatabaseDriver } from '../support/database-drivers.js';

/**
 * How memories live and change: user scopes, history, invalidation, expiry, partial updates,
 * batches and the extraction decisions. Run by describeOnDrivers on a database of its own.
 */
export function memoryLifecycleContract(driver: DatabaseDriver) {
  describe('memory lifecycle', () => {
    let database: Database | undefined;
    const embedder = createHashEmbedder(64);
    let store: MemoryStore;
    let other: MemoryStore;

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
      store = createPgMemoryStore({ db: database.db, embedder, tenantId: 'life' });
      other = createPgMemoryStore({ db: database.db, embedder, tenantId: 'life-other' });
    });
    afterAll(async () => {
      await database?.close();
    });

    /** The BM25 totals must equal what the rows say, whatever the lifecycle did to them. */
    async function expectTotalsExact(tenantId: string) {
      const [stats] = await queryRows<{ total: number; total_length: number }>(
        database!.db,
        sql`SELECT total::int, total_length::int FROM memory_corpus_stats WHERE tenant_id = ${tenantId}`,
      );
      const [rows] = await queryRows<{ n: number; len: number }>(
        database!.db,
        sql`SELECT count(*)::int AS n, coalesce(sum(bm25_length), 0)::int AS len FROM memories WHERE tenant_id = ${tenantId}`,
      );
      expect({ total: Number(stats?.total ?? 0), length: Number(stats?.total_length ?? 0) }).toEqual({ total: Number(rows!.n), length: Number(rows!.len) });
    }

    it("keeps one key per user apart, and recalls a user's memories with the agent's shared ones", async () => {
      const agentId = 'scopes';
      await store.save({ key: 'drink', content: 'Ann drinks oolong tea', agentId, userId: 'ann' });
      await store.save({ key: 'drink', content: 'Bo drinks black coffee', agentId, userId: 'bo' });
      await store.save({ key: 'office', content: 'The office kettle makes tea and coffee', agentId });
      expect((await store.get('drink', { agentId, userId: 'ann' }))?.content).toBe('Ann drinks oolong tea');
      expect((await store.get('drink', { agentId, userId: 'bo' }))?.userId).toBe('bo');
      expect(await store.get('drink', { agentId })).toBeNull();
      expect((await store.get('office', { agentId }))?.userId).toBeNull();

      const keys = async (opts: Parameters<MemoryStore['search']>[1]) =>
        (await store.search('tea coffee drinks', { agentId, mode: 'text', ...opts })).map((h) => `${h.memory.userId ?? '-'}:${h.memory.key}`).sort();
      expect(await keys({ userId: 'ann' })).toEqual(['ann:drink']);
      expect(await keys({ userId: 'ann', includeShared: true })).toEqual(['-:office', 'ann:drink']);
      expect(await keys({ userId: '' })).toEqual(['-:office']);
      expect(await keys({})).toEqual(['-:office', 'ann:drink', 'bo:drink']);
      expect((await store.list({ agentId, userId: 'bo' })).items.map((m) => m.content)).toEqual(['Bo drinks black coffee']);
      expect(await store.delete('drink', { agentId, userId: 'bo' })).toBe(true);
      expect((await store.get('drink', { agentId, userId: 'ann' }))?.content).toBe('Ann drinks oolong tea');
    });

    it('records every change with its actor, and keeps the history after a delete', async () => {
      const scope = { agentId: 'history', userId: 'cy' };
      await store.save({ key: 'city', content: 'Cy lives in Lyon', tags: ['home'], ...scope });
      await store.save({ key: 'city', content: 'Cy lives in Lyon', tags: ['home'], ...scope });
      await store.save({ key: 'city', content: 'Cy lives in Paris', tags: ['home'], ...scope, actor: { type: 'tool', conversationId: 'c1', turn: 3 } });
      await store.patch('city', scope, { addTags: ['France'] });
      expect(await store.delete('city', scope)).toBe(true);
      const events = await store.history('city', scope);
      expect(events.map((e) => e.event)).toEqual(['created', 'updated', 'updated', 'deleted']);
      expect(events[0]).toMatchObject({ content: 'Cy lives in Lyon', previousContent: null, tags: ['home'], actor: { type: 'api' } });
      expect(events[1]).toMatchObject({
        content: 'Cy lives in Paris',
        previousContent: 'Cy lives in Lyon',
        actor: { type: 'tool', conversationId: 'c1', turn: 3 },
      });
      expect(events[2]).toMatchObject({ content: 'Cy lives in Paris', tags: ['home', 'france'], previousTags: ['home'] });
      expect(events[3]).toMatchObject({ content: null, previousContent: 'Cy lives in Paris', tags: ['home', 'france'] });
      expect(events.every((e) => e.at instanceof Date)).toBe(true);
      // Another user's key of the same name has a history of its own.
      expect(await store.history('city', { agentId: 'history', userId: 'dee' })).toEqual([]);
    });

    it('changes only the fields a patch names, re-embedding only for new content', async () => {
      const scope = { agentId: 'patch' };
      await store.save({ key: 'p', content: 'Patch me gently', tags: ['a', 'b'], metadata: { n: 1 }, ...scope });
      const tagsOnly = await store.patch('p', scope, { removeTags: ['a'], addTags: ['c'] });
      expect(tagsOnly).toMatchObject({ content: 'Patch me gently', tags: ['b', 'c'], metadata: { n: 1 } });
      const withTtl = await store.patch('p', scope, { ttlSeconds: 3600 });
      expect(withTtl!.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
      const cleared = await store.patch('p', scope, { ttlSeconds: null, content: 'Patched for good' });
      expect(cleared).toMatchObject({ content: 'Patched for good', tags: ['b', 'c'], expiresAt: null });
      expect((await store.search('patched good', { ...scope, mode: 'text' }))[0]?.memory.key).toBe('p');
      expect(await store.search('gently', { ...scope, mode: 'text' })).toEqual([]);
      expect(await store.patch('missing', scope, { content: 'x' })).toBeNull();
      await expectTotalsExact('life');
    });

    it('saves a batch in one transaction: an item that fails leaves none written', async () => {
      const agentId = 'batch';
      const results = await store.saveMany([
        { key: 'b1', content: 'First of the batch', agentId },
        { key: 'b2', content: 'Second of the batch', agentId, userId: 'eve', tags: ['x'] },
      ]);
      expect(results.map((r) => [r.memory.key, r.created])).toEqual([
        ['b1', true],
        ['b2', true],
      ]);
      // A NUL cannot be stored: the second item fails inside the transaction, after the first was written.
      await expect(
        store.saveMany([
          { key: 'b3', content: 'Would be written first', agentId },
          { key: 'b4', content: 'Broken \u0000 content', agentId },
        ]),
      ).rejects.toThrow();
      expect(await store.get('b3', { agentId })).toBeNull();
      await expect(
        store.saveMany([
          { key: 'b1', content: 'x', agentId },
          { key: 'b1', content: 'y', agentId },
        ]),
      ).rejects.toThrow(/repeats the key/);
      await expectTotalsExact('life');
    });

    it('hides an expired memory at once, and the sweeper deletes it with an expired event', async () => {
      const scope = { agentId: 'expiry' };
      await store.save({ key: 'soon', content: 'A fleeting parking spot on level two', ...scope, ttlSeconds: 3600 });
      await store.save({ key: 'stays', content: 'A permanent parking spot on level one', ...scope });
      expect((await store.get('soon', scope))?.expiresAt).not.toBeNull();
      // Moved into the past directly: the store refuses to make something expire in the past.
      await database!.db.execute(sql`UPDATE memories SET expires_at = now() - interval '1 second' WHERE key = 'soon'`);
      expect(await store.get('soon', scope)).toBeNull();
      expect((await store.search('parking spot level', { ...scope, mode: 'hybrid' })).map((h) => h.memory.key)).toEqual(['stays']);
      expect((await store.list(scope)).items.map((m) => m.key)).toEqual(['stays']);
      expect(await store.delete('soon', scope)).toBe(false);

      expect(await sweepExpiredMemories(database!.db)).toBe(1);
      expect(await sweepExpiredMemories(database!.db)).toBe(0);
      expect((await store.history('soon', scope)).map((e) => [e.event, e.actor.type])).toEqual([
        ['created', 'api'],
        ['expired', 'system'],
      ]);
      await expectTotalsExact('life');
    });

    it('gives an expired key that is saved again a new life, recording the expiry first', async () => {
      const scope = { agentId: 'expiry-reuse' };
      await store.save({ key: 'k', content: 'Old life', ...scope, ttlSeconds: 60 });
      await database!.db.execute(sql`UPDATE memories SET expires_at = now() - interval '1 second' WHERE key = 'k' AND agent_id = 'expiry-reuse'`);
      const again = await store.save({ key: 'k', content: 'New life', ...scope });
      expect(again.created).toBe(true);
      expect(again.memory.expiresAt).toBeNull();
      expect((await store.history('k', scope)).map((e) => e.event)).toEqual(['created', 'expired', 'created']);
    });

    it('applies extraction decisions: adds deduplicated, updates with history, invalidations kept but not recalled', async () => {
      const scope = { agentId: 'extract', userId: 'fay' };
      const actor = { type: 'extraction' as const, conversationId: 'conv-1', turn: 2 };
      const [added, repeated, sameInBatch] = await store.applyChanges(
        scope,
        [
          { op: 'add', content: 'Fay prefers window seats', tags: ['extracted', 'travel'], metadata: { source: 'extraction' } },
          { op: 'add', content: '  fay prefers WINDOW seats. ' },
          { op: 'add', content: 'Fay is allergic to peanuts', tags: ['extracted'] },
        ],
        actor,
      );
      expect(added).toMatchObject({ op: 'add', status: 'applied' });
      expect(repeated).toMatchObject({ op: 'add', status: 'skipped', key: added!.key });
      expect(sameInBatch).toMatchObject({ status: 'applied' });
      const seatKey = added!.key!;
      const peanutKey = sameInBatch!.key!;

      const [updated, invalidated, unknown] = await store.applyChanges(
        scope,
        [
          { op: 'update', key: seatKey, content: 'Fay prefers aisle seats now', tags: ['preference'] },
          { op: 'invalidate', key: peanutKey },
          { op: 'invalidate', key: 'no-such-key' },
        ],
        actor,
      );
      expect(updated).toMatchObject({ status: 'applied', memory: { content: 'Fay prefers aisle seats now', tags: ['extracted', 'travel', 'preference'] } });
      expect(invalidated!.memory!.validTo).toBeInstanceOf(Date);
      expect(unknown).toMatchObject({ status: 'skipped', key: 'no-such-key' });

      expect((await store.history(seatKey, scope)).map((e) => [e.event, e.previousContent])).toEqual([
        ['created', null],
        ['updated', 'Fay prefers window seats'],
      ]);
      expect((await store.history(peanutKey, scope)).map((e) => [e.event, e.actor])).toEqual([
        ['created', actor],
        ['invalidated', actor],
      ]);
      // Invalidated: kept and readable by key, but out of search and list unless asked for.
      expect((await store.get(peanutKey, scope))?.validTo).toBeInstanceOf(Date);
      expect((await store.search('peanuts allergic', { ...scope, mode: 'text' })).length).toBe(0);
      expect((await store.search('peanuts allergic', { ...scope, mode: 'text', includeInvalid: true })).map((h) => h.memory.key)).toEqual([peanutKey]);
      expect((await store.list(scope)).items.map((m) => m.key)).toEqual([seatKey]);
      // An invalidated memory cannot be updated or invalidated again; said again, it is valid again.
      expect((await store.applyChanges(scope, [{ op: 'update', key: peanutKey, content: 'x' }], actor))[0]!.status).toBe('skipped');
      const [revived] = await store.applyChanges(scope, [{ op: 'add', content: 'Fay is allergic to peanuts.' }], actor);
      expect(revived).toMatchObject({ status: 'applied', key: peanutKey, memory: { validTo: null } });
      await expectTotalsExact('life');
    });

    it('never lets one tenant read, change or see the history of another', async () => {
      await other.save({ key: 'secret', content: 'Tenant two keeps this', agentId: 'iso' });
      expect(await store.get('secret', { agentId: 'iso' })).toBeNull();
      expect(await store.patch('secret', { agentId: 'iso' }, { content: 'hijacked' })).toBeNull();
      expect(await store.history('secret', { agentId: 'iso' })).toEqual([]);
      expect((await store.applyChanges({ agentId: 'iso' }, [{ op: 'invalidate', key: 'secret' }], { type: 'extraction' }))[0]!.status).toBe('skipped');
      expect((await other.get('secret', { agentId: 'iso' }))?.validTo).toBeNull();
    });
  });
}
