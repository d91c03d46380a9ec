import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { BLOCK_LIMITS } from '../../src/blocks/block-fields.js';
import { createPgBlockStore } from '../../src/blocks/pg-block-store.js';
import type { BlockStore } from '../../src/blocks/block-types.js';
import { describeOnDrivers } from '../support/database-drivers.js';

describeOnDrivers('PgBlockStore', (driver) => {
  let database: Database;
  let store: BlockStore;
  beforeAll(async () => {
    database = await driver.open();
    store = createPgBlockStore({ db: database.db, tenantId: 'blocks-store' });
  });
  afterAll(() => database?.close());

  const actor = (n: number) => ({ type: 'model', runId: `run-${n}`, conversationId: `c-${n}` }) as const;

  it('serialises concurrent appends to one block: none is lost', async () => {
    await store.put('log', { agentId: 'a', userId: 'u' }, { value: 'start', limit: 5_000 }, { type: 'api' });
    const n = 12;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        store.modelWrite({ agentId: 'a', userId: 'u', actor: actor(i), call: { tool: 'block_append', arguments: { label: 'log', text: `line ${i}` } } }),
      ),
    );
    const lines = (await store.get('log', { agentId: 'a', userId: 'u' }))!.value.split('\n');
    expect(lines).toHaveLength(n + 1);
    expect(new Set(lines.slice(1))).toEqual(new Set(Array.from({ length: n }, (_, i) => `line ${i}`)));
    expect((await store.history('log', { agentId: 'a', userId: 'u' })).events.filter((e) => e.actor.type === 'model')).toHaveLength(n);
  });

  it('lists the blocks a turn sees in scope order, and no other agent or user', async () => {
    await store.put('z-agent', { agentId: 'v', userId: null }, { value: '1' }, { type: 'api' });
    await store.put('a-user', { agentId: null, userId: 'vu' }, { value: '2' }, { type: 'api' });
    await store.put('m-own', { agentId: 'v', userId: 'vu' }, { value: '3' }, { type: 'api' });
    await store.put('x', { agentId: 'v', userId: 'other' }, { value: 'no' }, { type: 'api' });
    await store.put('y', { agentId: 'w', userId: null }, { value: 'no' }, { type: 'api' });
    expect((await store.visible('v', 'vu')).map((b) => b.label)).toEqual(['z-agent', 'a-user', 'm-own']);
    expect((await store.visible('v', null)).map((b) => b.label)).toEqual(['z-agent']);
  });

  it('refuses a block past the most a scope holds, and writes nothing of it', async () => {
    const scope = { agentId: null, userId: 'full' };
    for (let i = 0; i < BLOCK_LIMITS.maxPerScope; i++) await store.put(`b${i}`, scope, { value: 'x' }, { type: 'api' });
    await expect(store.put('one-more', scope, { value: 'x' }, { type: 'api' })).rejects.toMatchObject({ name: 'BlockWriteError', field: 'label' });
    expect(await store.get('one-more', scope)).toBeNull();
    expect((await store.history('one-more', scope)).events).toEqual([]);
    // Replacing one it holds is no new block.
    await store.put('b0', scope, { value: 'y' }, { type: 'api' });
  });

  it('holds a scope to its cap when new blocks are put at once (the count no longer races the inserts)', async () => {
    const scope = { agentId: null, userId: 'racing' };
    const tries = BLOCK_LIMITS.maxPerScope + 8;
    const results = await Promise.allSettled(Array.from({ length: tries }, (_, i) => store.put(`r${i}`, scope, { value: 'x' }, { type: 'api' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(BLOCK_LIMITS.maxPerScope);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.name)).toEqual(Array(8).fill('BlockWriteError'));
    expect(await store.list(scope)).toHaveLength(BLOCK_LIMITS.maxPerScope);
  });

  it('pages the history from the newest event back, not the oldest 10,000 only', async () => {
    const scope = { agentId: null, userId: 'paged' };
    for (let i = 0; i < 25; i++) await store.put('diary', scope, { value: `v${i}` }, { type: 'api' });
    const newest = await store.history('diary', scope, { limit: 10 });
    expect(newest.events.map((e) => e.value)).toEqual(Array.from({ length: 10 }, (_, i) => `v${15 + i}`));
    const older = await store.history('diary', scope, { limit: 10, before: newest.nextBefore! });
    expect(older.events.map((e) => e.value)).toEqual(Array.from({ length: 10 }, (_, i) => `v${5 + i}`));
    const oldest = await store.history('diary', scope, { limit: 10, before: older.nextBefore! });
    expect(oldest.events.map((e) => e.value)).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    expect(oldest.nextBefore).toBeNull();
    // Unasked, a page of the default size, the newest.
    const whole = await store.history('diary', scope);
    expect(whole.events.at(-1)!.value).toBe('v24');
    expect(whole.nextBefore).toBeNull();
  });

  it('leaves another tenant blind to the blocks', async () => {
    const other = createPgBlockStore({ db: database.db, tenantId: 'blocks-other' });
    expect(await other.visible('v', 'vu')).toEqual([]);
    expect(await other.get('m-own', { agentId: 'v', userId: 'vu' })).toBeNull();
    expect((await other.history('m-own', { agentId: 'v', userId: 'vu' })).events).toEqual([]);
  });
});
