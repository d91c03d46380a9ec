import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createBlockTools } from '../../src/blocks/block-tools.js';
import type { BlockCall, BlockScope, BlockStore } from '../../src/blocks/block-types.js';
import { createPgBlockStore } from '../../src/blocks/pg-block-store.js';
import type { Database } from '../../src/db/database.js';
import { ACTIVE, type MemoryWriteScreen } from '../../src/memory/memory-write-screen.js';
import { describeOnDrivers } from '../support/database-drivers.js';

/** A firewall that holds every write whose words say HOLD. */
const holdingScreen: MemoryWriteScreen = {
  screens: () => true,
  screen: async (texts) => texts.map((t) => (t.includes('HOLD') ? { status: 'quarantined', reasons: ['standing_order'], injectionScore: null } : ACTIVE)),
};

const ACTOR = { type: 'model', runId: 'run-1', conversationId: 'conv-1' } as const;

describeOnDrivers("a model's block writes: held writes, aborts, patches", (driver) => {
  let database: Database;
  let store: BlockStore;
  beforeAll(async () => {
    database = await driver.open();
    store = createPgBlockStore({ db: database.db, tenantId: 'model-write', screen: holdingScreen });
  });
  afterAll(() => database?.close());

  const own = (agentId: string): BlockScope => ({ agentId, userId: 'u' });
  const write = (agentId: string, call: BlockCall, signal?: AbortSignal) => store.modelWrite({ agentId, userId: 'u', call, actor: ACTOR, signal });
  const append = (label: string, text: string): BlockCall => ({ tool: 'block_append', arguments: { label, text } });
  const blockValue = async (label: string, scope: BlockScope) => (await store.get(label, scope))!.value;
  const heldId = async (label: string, scope: BlockScope) => (await store.history(label, scope)).events.find((e) => e.status === 'quarantined')!.id;

  it('approving a held write keeps the writes made since it was held: its edit is made again, not its old value written back', async () => {
    await store.put('notes', own('a1'), { value: 'Likes tea.' }, { type: 'api' });
    expect((await write('a1', append('notes', 'HOLD Always answer in French.'))).status).toBe('quarantined');
    expect((await write('a1', append('notes', 'Lives in York.'))).status).toBe('applied');
    const id = await heldId('notes', own('a1'));
    expect((await store.history('notes', own('a1'))).events.find((e) => e.id === id)!.actor).toMatchObject({
      type: 'model',
      tool: 'block_append',
      userId: 'u',
      arguments: { label: 'notes', text: 'HOLD Always answer in French.' },
    });
    const approved = await store.approve('notes', id, own('a1'));
    expect(approved.value).toBe('Likes tea.\nLives in York.\nHOLD Always answer in French.');
    expect(await blockValue('notes', own('a1'))).toBe(approved.value);
    const events = (await store.history('notes', own('a1'))).events;
    expect(events.find((e) => e.id === id)!.status).toBe('approved');
    expect(events.at(-1)).toMatchObject({ event: 'approved', actor: { type: 'api', approves: id, userId: 'u' } });
  });

  it('refuses to approve a held write that no longer applies (its replaced text gone, or past the limit), changing nothing', async () => {
    await store.put('notes', own('a2'), { value: 'Drinks tea.', limit: 40 }, { type: 'api' });
    await write('a2', { tool: 'block_replace', arguments: { label: 'notes', old: 'tea', new: 'HOLD coffee' } });
    const replaced = await heldId('notes', own('a2'));
    await store.put('notes', own('a2'), { value: 'Drinks milk.', limit: 40 }, { type: 'api' });
    await expect(store.approve('notes', replaced, own('a2'))).rejects.toMatchObject({
      name: 'BlockConflictError',
      message: expect.stringMatching(/no longer applies.*'old' does not occur/),
    });
    expect(await blockValue('notes', own('a2'))).toBe('Drinks milk.');
    expect((await store.history('notes', own('a2'))).events.find((e) => e.id === replaced)!.status).toBe('quarantined');

    await write('a2', append('notes', 'HOLD Say hi.'));
    const appended = (await store.history('notes', own('a2'))).events.filter((e) => e.status === 'quarantined').at(-1)!.id;
    await store.put('notes', own('a2'), { value: 'Drinks milk every single morning.', limit: 40 }, { type: 'api' });
    await expect(store.approve('notes', appended, own('a2'))).rejects.toMatchObject({
      name: 'BlockConflictError',
      message: expect.stringMatching(/at most 40/),
    });
    expect(await blockValue('notes', own('a2'))).toBe('Drinks milk every single morning.');
  });

  it('writes nothing when the write was aborted (its tool timed out) before it began', async () => {
    await store.put('notes', own('a3'), { value: 'Start.' }, { type: 'api' });
    const before = (await store.history('notes', own('a3'))).events.length;
    await expect(write('a3', append('notes', 'Too late.'), AbortSignal.abort(new Error('tool timed out')))).rejects.toThrow('tool timed out');
    expect(await blockValue('notes', own('a3'))).toBe('Start.');
    expect((await store.history('notes', own('a3'))).events).toHaveLength(before);
  });

  it('rolls back a write whose tool timed out while it waited for the block lock', async () => {
    await store.put('notes', own('a4'), { value: 'Start.' }, { type: 'api' });
    const before = (await store.history('notes', own('a4'))).events.length;
    const controller = new AbortController();
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1 FROM blocks WHERE tenant_id = 'model-write' AND agent_id = 'a4' FOR UPDATE`);
      locked();
      await released;
    });
    await isLocked;
    const waiting = write('a4', append('notes', 'Too late.'), controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort(new Error('tool timed out'));
    release();
    await holder;
    await expect(waiting).rejects.toThrow('tool timed out');
    expect(await blockValue('notes', own('a4'))).toBe('Start.');
    expect((await store.history('notes', own('a4'))).events).toHaveLength(before);
  });

  it("gives the block tools' writes the tool's signal: an aborted call writes nothing", async () => {
    await store.put('notes', own('a5'), { value: 'Start.' }, { type: 'api' });
    const visible = await store.visible('a5', 'u');
    const tools = createBlockTools({ blocks: store, agentId: 'a5', userId: 'u', runId: 'r', conversationId: 'c', visible });
    const appendTool = tools.find((t) => t.name === 'block_append')!;
    const signal = AbortSignal.abort(new Error('tool timed out'));
    await expect(Promise.resolve(appendTool.execute({ label: 'notes', text: 'Too late.' }, { signal, toolCallId: 'x' }))).rejects.toThrow('tool timed out');
    expect(await blockValue('notes', own('a5'))).toBe('Start.');
  });

  it('refuses block_update_json on a value that is not valid JSON instead of patching it as {}', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, city: { type: 'string' } } };
    await store.put('profile', own('a6'), { value: '{"name":"Ada"}', schema }, { type: 'api' });
    // Only a write around the checks (SQL, an old release) leaves a schema'd block holding this.
    await database.db.execute(sql`UPDATE blocks SET value = 'name: Ada' WHERE tenant_id = 'model-write' AND agent_id = 'a6'`);
    await expect(write('a6', { tool: 'block_update_json', arguments: { label: 'profile', patch: { city: 'York' } } })).rejects.toMatchObject({
      name: 'BlockWriteError',
      message: expect.stringMatching(/does not hold valid JSON/),
    });
    expect(await blockValue('profile', own('a6'))).toBe('name: Ada');
  });
});
