import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import type { MemoryStore } from '../../src/memory/memory-types.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import type { DatabaseDriver } from '../support/database-drivers.js';

/**
 * What makes a memory accountable: where it came from (sources), what was known at a moment
 * (asOf, record time), when its fact held (valid time) and what deleting its conversation does
 * to it (lineage). Run by describeOnDrivers on a database of its own.
 */
export function memoryAccountabilityContract(driver: DatabaseDriver) {
  describe('memory accountability', () => {
    let database: Database | undefined;
    const embedder = createHashEmbedder(64);
    let store: MemoryStore;

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
      store = createPgMemoryStore({ db: database.db, embedder, tenantId: 'acct' });
    });
    afterAll(async () => {
      await database?.close();
    });

    /** A moment strictly between the writes before and after it (the database's clock has microseconds). */
    async function moment(): Promise<Date> {
      await sleep(5);
      const at = new Date();
      await sleep(5);
      return at;
    }

    async function expectTotalsExact() {
      const [stats] = await queryRows<{ total: number; total_length: number }>(
        database!.db,
        sql`SELECT total::int, total_length::int FROM memory_corpus_stats WHERE tenant_id = 'acct'`,
      );
      const [rows] = await queryRows<{ n: number; len: number }>(
        database!.db,
        sql`SELECT count(*)::int AS n, coalesce(sum(bm25_length), 0)::int AS len FROM memories WHERE tenant_id = 'acct'`,
      );
      expect({ total: Number(stats?.total ?? 0), length: Number(stats?.total_length ?? 0) }).toEqual({ total: Number(rows!.n), length: Number(rows!.len) });
    }

    it('names the writer of each wording, with the turn and the words it was drawn from', async () => {
      const scope = { agentId: 'prov', userId: 'ann' };
      const api = await store.save({ key: 'k-api', content: 'Ann keeps bees', ...scope });
      expect(api.memory.sources).toEqual([{ actor: 'api', conversationId: null, turn: null, quote: null, at: expect.any(Date) }]);
      const tool = await store.save({ key: 'k-tool', content: 'Ann plays the cello', ...scope, actor: { type: 'tool', conversationId: 'c-1', turn: 2 } });
      expect(tool.memory.sources).toMatchObject([{ actor: 'tool', conversationId: 'c-1', turn: 2, quote: null }]);

      const actor = { type: 'extraction' as const, conversationId: 'c-2', turn: 4 };
      const quote = { text: 'I moved to Oslo', start: 7, end: 22 };
      const [added] = await store.applyChanges(scope, [{ op: 'add', content: 'Ann lives in Oslo.', quote }], actor);
      expect(added!.memory!.sources).toMatchObject([{ actor: 'extraction', conversationId: 'c-2', turn: 4, quote }]);
      const later = { text: 'now in Bergen', start: 0, end: 13 };
      const [updated] = await store.applyChanges(scope, [{ op: 'update', key: added!.key!, content: 'Ann lives in Bergen.', quote: later }], {
        ...actor,
        conversationId: 'c-3',
        turn: 1,
      });
      expect(updated!.memory!.sources.map((s) => [s.conversationId, s.turn, s.quote?.text])).toEqual([
        ['c-2', 4, 'I moved to Oslo'],
        ['c-3', 1, 'now in Bergen'],
      ]);
      // The same words again add no origin; the history keeps the origins each event left.
      await store.save({ key: 'k-api', content: 'Ann keeps bees', ...scope, tags: ['hobby'] });
      expect((await store.get('k-api', scope))!.sources).toHaveLength(1);
      const events = await store.history(added!.key!, scope);
      expect(events.map((e) => e.sources.length)).toEqual([1, 2]);
      expect((await store.list(scope)).items.find((m) => m.key === added!.key)!.sources).toHaveLength(2);
      expect((await store.search('Bergen', { ...scope, mode: 'text' }))[0]!.memory.sources).toHaveLength(2);
    });

    it('reads a memory, a list and a search as they were before, between and after two writes', async () => {
      const scope = { agentId: 'asof', userId: 'bo' };
      await store.save({ key: 'steady', content: 'Bo drinks green tea every morning', ...scope });
      const before = await moment();
      await store.save({ key: 'car', content: 'Bo drives a red Volvo', tags: ['car'], ...scope });
      const between1 = await moment();
      await store.save({ key: 'car', content: 'Bo rides a blue bicycle', tags: ['bike'], ...scope });
      const between2 = await moment();
      await store.delete('car', scope);
      const after = await moment();

      expect(await store.get('car', scope, { asOf: before })).toBeNull();
      expect(await store.get('car', scope, { asOf: between1 })).toMatchObject({ content: 'Bo drives a red Volvo', tags: ['car'] });
      expect(await store.get('car', scope, { asOf: between2 })).toMatchObject({ content: 'Bo rides a blue bicycle', tags: ['bike'] });
      expect(await store.get('car', scope, { asOf: after })).toBeNull();
      expect(await store.get('car', scope)).toBeNull();

      const listed = async (asOf: Date) => (await store.list({ ...scope, asOf })).items.map((m) => m.content).sort();
      expect(await listed(before)).toEqual(['Bo drinks green tea every morning']);
      expect(await listed(between1)).toEqual(['Bo drinks green tea every morning', 'Bo drives a red Volvo']);
      expect(await listed(between2)).toEqual(['Bo drinks green tea every morning', 'Bo rides a blue bicycle']);
      const page = await store.list({ ...scope, asOf: between1, limit: 1 });
      expect(page.items).toHaveLength(1);
      const rest = await store.list({ ...scope, asOf: between1, limit: 1, cursor: page.nextCursor! });
      expect([...page.items, ...rest.items].map((m) => m.key).sort()).toEqual(['car', 'steady']);

      for (const mode of ['text', 'hybrid', 'vector'] as const) {
        const found = async (query: string, asOf: Date, tagsAny?: string[]) =>
          (await store.search(query, { ...scope, mode, asOf, topK: 3, ...(tagsAny ? { tagsAny } : {}) })).map((h) => h.memory.content);
        // What it said then is what it is found by, with the tags it had then.
        expect((await found('red Volvo', between1))[0]).toBe('Bo drives a red Volvo');
        expect(await found('red Volvo', between1, ['car'])).toEqual(['Bo drives a red Volvo']);
        expect(await found('red Volvo', between1, ['bike'])).toEqual([]);
        expect((await found('blue bicycle', between2))[0]).toBe('Bo rides a blue bicycle');
        expect(await found('blue bicycle', between2, ['car'])).toEqual([]);
        if (mode === 'text') {
          expect(await found('blue bicycle', between1)).toEqual([]);
          expect(await found('Volvo bicycle', after)).toEqual([]);
        }
        // A memory unchanged since is found through today's indexes.
        expect(await found('green tea morning', between2)).toContain('Bo drinks green tea every morning');
        expect(await found('green tea morning', before)).toContain('Bo drinks green tea every morning');
      }
      expect((await store.search('green tea', { ...scope, mode: 'text', asOf: new Date(0) })).length).toBe(0);
    });

    it('keeps facts out of reads at moments they did not hold (valid time), and the history lists both times', async () => {
      const scope = { agentId: 'valid', userId: 'cy' };
      const until = new Date('2022-06-30T00:00:00Z');
      await store.save({ key: 'job', content: 'Cy worked at Acme', validFrom: new Date('2019-01-01T00:00:00Z'), validUntil: until, ...scope });
      await store.save({ key: 'job-now', content: 'Cy works at Globex', validFrom: new Date('2022-07-01T00:00:00Z'), ...scope });
      await store.save({ key: 'plan', content: 'Cy will work at Initech', validFrom: new Date(Date.now() + 86_400_000), ...scope });

      expect(await store.get('job', scope)).toBeNull();
      expect(await store.get('job', scope, { validAt: new Date('2021-01-01T00:00:00Z') })).toMatchObject({ content: 'Cy worked at Acme', validUntil: until });
      const keys = async (validAt?: Date) => (await store.list({ ...scope, ...(validAt ? { validAt } : {}) })).items.map((m) => m.key).sort();
      expect(await keys()).toEqual(['job-now']);
      expect(await keys(new Date('2021-01-01T00:00:00Z'))).toEqual(['job']);
      expect(await keys(new Date(Date.now() + 2 * 86_400_000))).toEqual(['job-now', 'plan']);
      const search = async (validAt?: Date) =>
        (await store.search('Cy work Acme Globex Initech', { ...scope, mode: 'hybrid', ...(validAt ? { validAt } : {}) })).map((h) => h.memory.key).sort();
      expect(await search()).toEqual(['job-now']);
      expect(await search(new Date('2020-05-05T00:00:00Z'))).toEqual(['job']);

      const patched = await store.patch('job', scope, { validUntil: null });
      expect(patched).toMatchObject({ validUntil: null });
      const events = await store.history('job', scope);
      expect(events.map((e) => [e.event, e.validUntil?.toISOString() ?? null])).toEqual([
        ['created', until.toISOString()],
        ['updated', null],
      ]);
      expect(events[0]!.validFrom?.toISOString()).toBe('2019-01-01T00:00:00.000Z');
    });

    it('deletes the memories drawn only from a deleted conversation, and marks the other origins there', async () => {
      const scope = { agentId: 'lineage', userId: 'di' };
      const from = (conversationId: string, turn = 1) => ({ type: 'extraction' as const, conversationId, turn });
      const quote = { text: 'my words', start: 0, end: 8 };
      const [only] = await store.applyChanges(scope, [{ op: 'add', content: 'Di has a cat named Tom', quote }], from('conv-x'));
      const [both] = await store.applyChanges(scope, [{ op: 'add', content: 'Di likes jazz', quote }], from('conv-x', 2));
      await store.applyChanges(scope, [{ op: 'update', key: both!.key!, content: 'Di likes jazz and blues', quote }], from('conv-y'));
      const [elsewhere] = await store.applyChanges(scope, [{ op: 'add', content: 'Di runs marathons', quote }], from('conv-y', 3));

      const kept = await store.forgetConversation('conv-x', { cascade: false });
      expect(kept).toEqual({ deleted: 0, marked: 2 });
      expect((await store.get(only!.key!, scope))!.sources).toMatchObject([{ conversationId: 'conv-x', deleted: true, quote: null }]);

      const cascaded = await store.forgetConversation('conv-x', { cascade: true });
      expect(cascaded).toEqual({ deleted: 1, marked: 1 });
      expect(await store.get(only!.key!, scope)).toBeNull();
      const survivor = await store.get(both!.key!, scope);
      expect(survivor!.sources.map((s) => [s.conversationId, s.deleted ?? false, s.quote?.text ?? null])).toEqual([
        ['conv-x', true, null],
        ['conv-y', false, 'my words'],
      ]);
      expect((await store.get(elsewhere!.key!, scope))!.sources).toMatchObject([{ conversationId: 'conv-y', quote }]);
      // The history keeps no quote from the deleted conversation either.
      const [left] = await queryRows<{ n: number }>(
        database!.db,
        sql`SELECT count(*)::int AS n FROM memory_history WHERE tenant_id = 'acct' AND sources @> '[{"conversationId": "conv-x"}]'::jsonb
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(sources) o WHERE o->>'conversationId' = 'conv-x' AND o ? 'quote')`,
      );
      expect(Number(left!.n)).toBe(0);
      expect((await store.history(only!.key!, scope)).map((e) => e.event)).toEqual(['created', 'deleted']);
      await expectTotalsExact();
    });
  });
}
