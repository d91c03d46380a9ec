import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { reindexStaleTurns } from '../../../src/conversations/turn-text-index.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { exported, type TurnCorpusFixture } from './turn-corpus-fixture.js';

/** Upkeep: facts added to a turn, deletion, isolation, and rebuilding after an analyzer change. Registered inside the turns corpus contract's `describe`. */
export function turnCorpusUpkeepCases(f: TurnCorpusFixture) {
  const { db, tenant, acme, expectIndexExact } = f;
  it('adds extracted facts to a turn’s BM25 keys, not its vector, once each', async () => {
    const { id } = await acme().store.import(
      exported('fay', [{ question: 'We just got back from Lisbon.', answer: 'Welcome home!', at: '2026-03-01T10:00:00.000Z' }]),
      'fay',
    );
    const search = async () => (await acme().search.search('Portugal trip', { agentId: 'fay', mode: 'text' })).hits;
    expect(await search()).toEqual([]);
    const [before] = await queryRows<{ embedding: string }>(db(), sql`SELECT embedding::text AS embedding FROM turns WHERE conversation_id = ${id}`);
    expect(await acme().index.addFacts(id, 1, ['The user took a trip to Portugal.', 'The user took a trip to Portugal.'])).toBe(true);
    expect((await search()).map((h) => [h.conversationId, h.turn])).toEqual([[id, 1]]);
    // Known facts add nothing; a turn that is not there is not found.
    expect(await acme().index.addFacts(id, 1, ['  The user took a trip   to Portugal. '])).toBe(false);
    expect(await acme().index.addFacts(id, 7, ['The user likes figs.'])).toBe(false);
    expect(await acme().index.addFacts(id, 1, ['The user flew with TAP.'])).toBe(true);
    const [after] = await queryRows<{ embedding: string; facts: string }>(
      db(),
      sql`SELECT embedding::text AS embedding, facts FROM turns WHERE conversation_id = ${id}`,
    );
    expect(after!.facts).toBe('The user took a trip to Portugal.\nThe user flew with TAP.');
    expect(after!.embedding).toBe(before!.embedding);
    await expectIndexExact('acme');
    // Another tenant cannot key acme's turn.
    expect(await tenant('globex').index.addFacts(id, 1, ['The user is a spy.'])).toBe(false);
  });

  it('takes a deleted conversation’s turns out of the postings and totals', async () => {
    const before = await queryRows(db(), sql`SELECT total, total_length FROM turn_corpus_stats WHERE tenant_id = 'acme'`);
    const terms = await queryRows(db(), sql`SELECT term, df FROM turn_term_stats WHERE tenant_id = 'acme' ORDER BY term`);
    const imported = await acme().store.import(
      exported('del', [
        { question: 'The zeppelin hangar is in Friedrichshafen.', answer: 'Zeppelins, noted.', at: '2025-01-01T00:00:00.000Z' },
        { question: 'And the museum?', answer: 'The zeppelin museum too.', at: '2025-01-01T00:01:00.000Z' },
      ]),
      'del',
    );
    expect((await acme().search.search('zeppelin', { agentId: 'del', mode: 'text' })).hits).toHaveLength(2);
    expect(await acme().store.delete(imported.id, 'del')).toBe(true);
    expect(await queryRows(db(), sql`SELECT total, total_length FROM turn_corpus_stats WHERE tenant_id = 'acme'`)).toEqual(before);
    expect(await queryRows(db(), sql`SELECT term, df FROM turn_term_stats WHERE tenant_id = 'acme' ORDER BY term`)).toEqual(terms);
    expect((await acme().search.search('zeppelin', { agentId: 'del', mode: 'hybrid' })).hits).toEqual([]);
    await expectIndexExact('acme');
    // A turn indexed after its conversation was deleted is nothing, not an error.
    expect(await acme().index.indexConversation(imported.id)).toBe(0);
  });

  it('keeps turns to their tenant, agent, user and conversation', async () => {
    const globex = tenant('globex');
    const words = 'The quetzalcoatlus flies over the vault lake';
    const alpha = await acme().store.import(
      exported('shared-agent', [{ question: words, answer: 'Quetzalcoatlus noted.', at: '2025-02-02T00:00:00.000Z' }], 'u-1'),
      'shared-agent',
    );
    const other = await acme().store.import(
      exported('shared-agent', [{ question: words, answer: 'Noted for user two.', at: '2025-02-02T00:00:00.000Z' }], 'u-2'),
      'shared-agent',
    );
    const anonymous = await acme().store.import(
      exported('shared-agent', [{ question: words, answer: 'Noted for nobody.', at: '2025-02-02T00:00:00.000Z' }]),
      'shared-agent',
    );
    const ids = (hits: { conversationId: string }[]) => hits.map((h) => h.conversationId).sort();
    for (const mode of ['hybrid', 'vector', 'text'] as const) {
      expect((await globex.search.search(words, { agentId: 'shared-agent', mode, topK: 50 })).hits, mode).toEqual([]);
      expect(ids((await acme().search.search(words, { agentId: 'shared-agent', mode, topK: 50 })).hits), mode).toEqual(
        [alpha.id, other.id, anonymous.id].sort(),
      );
      expect(ids((await acme().search.search(words, { agentId: 'shared-agent', userId: 'u-1', mode, topK: 50 })).hits), mode).toEqual([alpha.id]);
      expect(ids((await acme().search.search(words, { agentId: 'shared-agent', userId: '', mode, topK: 50 })).hits), mode).toEqual([anonymous.id]);
      expect(ids((await acme().search.search(words, { agentId: 'someone-else', mode, topK: 50 })).hits), mode).toEqual([]);
      expect(ids((await acme().search.search(words, { agentId: 'shared-agent', conversationId: other.id, mode, topK: 50 })).hits), mode).toEqual([other.id]);
      expect(ids((await acme().search.search(words, { agentId: 'shared-agent', excludeConversationId: other.id, mode, topK: 50 })).hits), mode).toEqual(
        [alpha.id, anonymous.id].sort(),
      );
    }
    // Globex's writes leave acme's statistics (and so its scores) alone.
    const scores = async () => (await acme().search.search(words, { agentId: 'shared-agent', mode: 'text', topK: 50 })).hits.map((h) => h.score);
    const before = await scores();
    await globex.store.import(
      exported('shared-agent', [{ question: `${words} ${words}`, answer: 'Globex too.', at: '2025-02-02T00:00:00.000Z' }]),
      'shared-agent',
    );
    expect(await scores()).toEqual(before);
    // Nor can a tenant index another's conversation by its id.
    expect(await globex.index.indexConversation(alpha.id)).toBe(0);
    await expectIndexExact('acme');
    await expectIndexExact('globex');
  });

  it('rebuilds the BM25 index of a tenant whose postings another analyzer wrote, at start', async () => {
    const before = (await acme().search.search('beagle', { agentId: 'ana', mode: 'text' })).hits;
    expect(before.length).toBeGreaterThan(0);
    await db().execute(sql`UPDATE turn_corpus_stats SET analyzer_id = 'en-v0:other' WHERE tenant_id = 'acme'`);
    await expect(acme().search.search('beagle', { agentId: 'ana', mode: 'text' })).rejects.toThrow(/analyzer/i);
    const count = await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM turns WHERE tenant_id = 'acme'`);
    expect(await reindexStaleTurns(db(), { batchSize: 3 })).toBe(Number(count[0]!.n));
    expect((await acme().search.search('beagle', { agentId: 'ana', mode: 'text' })).hits).toEqual(before);
    await expectIndexExact('acme');
    expect(await reindexStaleTurns(db())).toBe(0);
  });
}
