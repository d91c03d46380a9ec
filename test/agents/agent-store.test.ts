import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPgAgentStore } from '../../src/agents/pg-agent-store.js';
import { AgentExistsError, type AgentStore } from '../../src/agents/agent-store.js';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { InvalidCursorError } from '../../src/retrieval/cursor.js';
import { describeOnDrivers } from '../support/database-drivers.js';

describeOnDrivers('agent store', (driver) => {
  describe('AgentStore contract', () => {
    let database: Database | undefined;
    let store: AgentStore;
    let other: AgentStore;

    beforeAll(async () => {
      database = await driver.open();
      store = createPgAgentStore({ db: database.db, tenantId: 'alpha' });
      other = createPgAgentStore({ db: database.db, tenantId: 'beta' });
    });
    afterAll(async () => {
      await database?.close();
    });
    beforeEach(async () => {
      await database!.db.execute(sql`DELETE FROM agent_versions`);
      await database!.db.execute(sql`DELETE FROM agents`);
    });

    const versionsOf = async (s: AgentStore, id: string) => (await s.versions(id, { limit: 100 }))?.items.map((v) => v.version);

    it('creates version 1 and reads it back', async () => {
      const created = await store.create('support', { name: 'Support', instructions: 'Be brief.', temperature: 0.2, tools: { deny: ['delete_memory'] } });
      expect(created).toMatchObject({
        id: 'support',
        version: 1,
        name: 'Support',
        instructions: 'Be brief.',
        temperature: 0.2,
        tools: { deny: ['delete_memory'] },
      });
      expect(created.createdAt).toBeInstanceOf(Date);
      expect(await store.get('support')).toEqual(created);
      expect(await store.get('nobody')).toBeNull();
      const versions = await store.versions('support', {});
      expect(versions).toEqual({
        items: [
          {
            agentId: 'support',
            version: 1,
            settings: { name: 'Support', instructions: 'Be brief.', temperature: 0.2, tools: { deny: ['delete_memory'] } },
            createdAt: created.createdAt,
          },
        ],
        nextCursor: null,
      });
      expect(await store.getVersion('support', 1)).toEqual(versions!.items[0]);
      expect(await store.getVersion('support', 2)).toBeNull();
      expect(await store.getVersion('support', 2 ** 40)).toBeNull();
    });

    it('refuses an id that is taken, and writes nothing', async () => {
      await store.create('taken', { name: 'First' });
      await expect(store.create('taken', { name: 'Second' })).rejects.toBeInstanceOf(AgentExistsError);
      expect(await store.get('taken')).toMatchObject({ name: 'First', version: 1 });
      expect(await versionsOf(store, 'taken')).toEqual([1]);
    });

    it('lists newest first, a page at a time', async () => {
      const ids = ['a', 'b', 'c', 'd', 'e'];
      for (const id of ids) await store.create(id, { name: id.toUpperCase() });
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await store.list({ limit: 2, cursor });
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((a) => a.id));
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      expect(seen).toEqual([...ids].reverse());
      await expect(store.list({ cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
    });

    it('pages ids of any shape, created in one instant', async () => {
      // One transaction: every row gets the same created_at, and the id alone orders them.
      const ids = ['x:1', 'x@2', 'x.3', 'x-4', 'ü 5'];
      await database!.db.transaction(async (tx) => {
        for (const id of ids) {
          await tx.execute(sql`INSERT INTO agents (tenant_id, id, version, settings) VALUES ('alpha', ${id}, 1, ${JSON.stringify({ name: id })}::jsonb)`);
        }
      });
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list({ limit: 2, cursor });
        seen.push(...page.items.map((a) => a.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect([...seen].sort()).toEqual([...ids].sort());
      expect(new Set(seen).size).toBe(ids.length);
    });

    it('makes a new version for a change, and keeps the version when nothing changes', async () => {
      const created = await store.create('bot', { name: 'Bot', model: 'gpt-4o-mini', recall: { memoryTopK: 3 } });
      const changed = await store.update('bot', { instructions: 'Answer in French.' });
      expect(changed).toMatchObject({ version: 2, name: 'Bot', model: 'gpt-4o-mini', instructions: 'Answer in French.', recall: { memoryTopK: 3 } });
      expect(changed!.createdAt).toEqual(created.createdAt);
      expect(changed!.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());

      // The same values, in another key order: no new version.
      const same = await store.update('bot', { recall: { memoryTopK: 3 }, model: 'gpt-4o-mini', instructions: 'Answer in French.' });
      expect(same).toEqual(changed);
      expect(await store.update('bot', {})).toEqual(changed);

      // A nested object is replaced whole.
      const recall = await store.update('bot', { recall: { knowledgeTopK: 2 } });
      expect(recall).toMatchObject({ version: 3, recall: { knowledgeTopK: 2 } });
      expect(recall!.recall).toEqual({ knowledgeTopK: 2 });

      expect(await versionsOf(store, 'bot')).toEqual([3, 2, 1]);
      expect((await store.getVersion('bot', 1))!.settings).toEqual({ name: 'Bot', model: 'gpt-4o-mini', recall: { memoryTopK: 3 } });
      expect((await store.getVersion('bot', 2))!.settings).toMatchObject({ instructions: 'Answer in French.' });
      expect(await store.update('nobody', { name: 'X' })).toBeNull();
    });

    it('clears a field given as null', async () => {
      await store.create('clear', { name: 'Clear', model: 'm1', budget: { maxTokens: 1000 }, memoryExtraction: false });
      const cleared = await store.update('clear', { model: null, budget: null, memoryExtraction: null });
      expect(cleared).toMatchObject({ version: 2, name: 'Clear' });
      expect(cleared).not.toHaveProperty('model');
      expect(cleared).not.toHaveProperty('budget');
      expect(cleared).not.toHaveProperty('memoryExtraction');
      expect((await store.getVersion('clear', 2))!.settings).toEqual({ name: 'Clear' });
      // Clearing what is not set changes nothing.
      expect((await store.update('clear', { instructions: null }))!.version).toBe(2);
    });

    it('runs a check on the resulting settings inside the update, writing nothing when it throws', async () => {
      await store.create('checked', { name: 'Checked', model: 'm1' });
      const seen: unknown[] = [];
      await expect(
        store.update(
          'checked',
          { model: 'm2' },
          {
            check(next, current) {
              seen.push([next.model, current.model, current.version]);
              throw new Error('refused');
            },
          },
        ),
      ).rejects.toThrow('refused');
      expect(seen).toEqual([['m2', 'm1', 1]]);
      expect(await store.get('checked')).toMatchObject({ version: 1, model: 'm1' });
      expect(await versionsOf(store, 'checked')).toEqual([1]);
    });

    it('pages versions newest first', async () => {
      await store.create('paged', { name: 'v1' });
      for (let i = 2; i <= 5; i++) await store.update('paged', { name: `v${i}` });
      const first = await store.versions('paged', { limit: 2 });
      expect(first!.items.map((v) => [v.version, v.settings.name])).toEqual([
        [5, 'v5'],
        [4, 'v4'],
      ]);
      const second = await store.versions('paged', { limit: 2, cursor: first!.nextCursor! });
      expect(second!.items.map((v) => v.version)).toEqual([3, 2]);
      const third = await store.versions('paged', { limit: 2, cursor: second!.nextCursor! });
      expect(third).toMatchObject({ items: [{ version: 1 }], nextCursor: null });
      expect(await store.versions('nobody', {})).toBeNull();
      await expect(store.versions('paged', { cursor: 'bm90LWEtY3Vyc29y' })).rejects.toBeInstanceOf(InvalidCursorError);
    });

    it('deletes the agent with its versions', async () => {
      await store.create('gone', { name: 'Gone' });
      await store.update('gone', { name: 'Gone again' });
      expect(await store.delete('gone')).toBe(true);
      expect(await store.get('gone')).toBeNull();
      expect(await store.versions('gone', {})).toBeNull();
      expect(await store.getVersion('gone', 1)).toBeNull();
      expect(await queryRows(database!.db, sql`SELECT version FROM agent_versions WHERE agent_id = 'gone'`)).toEqual([]);
      expect(await store.delete('gone')).toBe(false);
      // The id is free again, and starts over.
      expect((await store.create('gone', { name: 'Back' })).version).toBe(1);
      expect(await versionsOf(store, 'gone')).toEqual([1]);
    });

    it("keeps each tenant's agents apart, under the same id too", async () => {
      await store.create('shared', { name: 'Alpha' });
      await store.create('alpha-only', { name: 'Alpha only' });
      await other.create('shared', { name: 'Beta' });
      expect(await other.get('alpha-only')).toBeNull();
      expect((await other.list({})).items.map((a) => a.id)).toEqual(['shared']);
      expect(await other.update('alpha-only', { name: 'Beta was here' })).toBeNull();
      expect(await other.delete('alpha-only')).toBe(false);
      expect(await other.versions('alpha-only', {})).toBeNull();
      expect(await other.getVersion('alpha-only', 1)).toBeNull();
      expect((await other.update('shared', { name: 'Beta 2' }))!.version).toBe(2);
      expect(await store.get('shared')).toMatchObject({ name: 'Alpha', version: 1 });
      expect(await store.get('alpha-only')).toMatchObject({ name: 'Alpha only', version: 1 });
      expect(await other.delete('shared')).toBe(true);
      expect(await versionsOf(store, 'shared')).toEqual([1]);
    });

    it('gives concurrent updates distinct, consecutive versions', async () => {
      await store.create('busy', { name: 'Busy' });
      const n = 8;
      const results = await Promise.all(Array.from({ length: n }, (_, i) => store.update('busy', { instructions: `Rule ${i}` })));
      expect(results.map((a) => a!.version).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 2));
      expect(await versionsOf(store, 'busy')).toEqual(Array.from({ length: n + 1 }, (_, i) => n + 1 - i));
      const final = await store.get('busy');
      expect(final!.version).toBe(n + 1);
      // The agent holds its newest version's settings.
      expect((await store.getVersion('busy', n + 1))!.settings.instructions).toBe(final!.instructions);
    });
  });
});
