import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import type { ConversationExport } from '../../src/conversations/conversation-types.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import { queryRows } from '../../src/db/query-rows.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { createTurnIndex } from '../../src/conversations/turn-index.js';
import { embedder, exported, useTurnCorpusFixture } from './support/turn-corpus-fixture.js';
import { signal } from '../support/signal.js';
import { spyOnTransactions } from '../support/transaction-spy.js';

const day = (d: number, h = 9) => new Date(Date.UTC(2025, 2, d, h)).toISOString();

/** Sessions with words in common (their document frequencies add up across conversations) and words of their own. */
const sessions = (userId: string): ConversationExport[] =>
  Array.from({ length: 6 }, (_, s) =>
    exported(
      'importer',
      Array.from({ length: 3 + (s % 3) }, (_, t) => ({
        question: `Session ${s} turn ${t}: my beagle Rex and the garden, ${['tomatoes', 'marigolds', 'router', 'thermostat'][(s + t) % 4]}?`,
        answer: `Noted for session ${s}: ${'the dog walks daily '.repeat(t + 1)}and word${s}x${t} is its own.`,
        at: day(s + 1, 9 + t),
      })),
      userId,
    ),
  );

describeOnDrivers('conversation imports written together', (driver) => {
  const f = useTurnCorpusFixture(driver);

  /** What a tenant's import left, by conversation title and turn: turns, messages, postings, frequencies, totals. */
  async function stored(tenantId: string) {
    const turns = await queryRows<Record<string, unknown>>(
      f.db(),
      sql`SELECT c.title, t.turn, t.user_id, t.question, t.answer, t.before, t.after, t.embedded_text, t.embedding::text AS embedding, t.bm25_length, t.at
        FROM turns t JOIN conversations c ON c.id = t.conversation_id WHERE t.tenant_id = ${tenantId} ORDER BY 1, 2`,
    );
    const messages = await queryRows<Record<string, unknown>>(
      f.db(),
      sql`SELECT c.title, c.turn_count, c.message_count, m.seq, m.turn, m.role, m.content, m.created_at
        FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.tenant_id = ${tenantId} ORDER BY 1, 4`,
    );
    const postings = await queryRows<{ p: string }>(
      f.db(),
      sql`SELECT c.title || '#' || t.turn || ' ' || p.term || ' ' || p.tf || ' ' || p.doc_length AS p
        FROM turn_postings p JOIN turns t ON t.id = p.turn_id JOIN conversations c ON c.id = t.conversation_id
        WHERE p.tenant_id = ${tenantId} ORDER BY 1`,
    );
    const terms = await queryRows<{ term: string; df: number }>(f.db(), sql`SELECT term, df FROM turn_term_stats WHERE tenant_id = ${tenantId} ORDER BY term`);
    const [totals] = await queryRows<{ total: string; total_length: string }>(
      f.db(),
      sql`SELECT total::text, total_length::text FROM turn_corpus_stats WHERE tenant_id = ${tenantId}`,
    );
    return { turns, messages, postings: postings.map((r) => r.p), terms, totals };
  }

  it('stores the same rows, postings and BM25 totals as importing the conversations one by one', async () => {
    const one = f.tenant('one-by-one');
    for (const data of sessions('ana')) await one.store.import(data, 'importer');

    const counted = spyOnTransactions(f.db());
    const index = createTurnIndex({ db: counted.db, embedder, tenantId: 'batched' });
    const store = createPgConversationStore({ db: counted.db, tenantId: 'batched', turnIndex: index });
    await Promise.all(sessions('ana').map((data) => store.import(data, 'importer')));
    // The first import is written at once, the others that arrived meanwhile together.
    expect(counted.transactions()).toBeGreaterThan(0);
    expect(counted.transactions()).toBeLessThan(sessions('ana').length);

    expect(await stored('batched')).toEqual(await stored('one-by-one'));
    await f.expectIndexExact('batched');
    await f.expectIndexExact('one-by-one');
  });

  // Imports of one tenant held the turns' corpus alone: on a server a second import waited for the
  // first's whole transaction (its graph inserts, its postings) with a core idle.
  it.skipIf(driver.name === 'PGlite')('writes two imports of one tenant side by side on a server, the index exact after', async () => {
    const [seed, first, second] = sessions('cy');
    // The tenant's corpus exists: its first postings are written holding it alone.
    await f.tenant('side-by-side').store.import(seed!, 'importer');
    // Each import's transaction, once it holds the tenant's corpus (its first statement), waits
    // until the other's holds it too: imports that took the corpus in turns never meet here.
    const arrived = [signal(), signal()];
    const meet = async (me: number) => {
      arrived[me]!.resolve();
      const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('one import waited for the other')), 10_000));
      await Promise.race([arrived[1 - me]!.promise, timeout]);
    };
    let met = 0;
    const holding = spyOnTransactions(f.db(), async (me) => {
      if (me >= 2) return;
      met++;
      await meet(me);
    }).db;
    const index = createTurnIndex({ db: holding, embedder, tenantId: 'side-by-side' });
    const store = createPgConversationStore({ db: holding, tenantId: 'side-by-side', turnIndex: index });
    await Promise.all([store.import(first!, 'importer'), store.import(second!, 'importer')]);
    expect(met).toBe(2);
    await f.expectIndexExact('side-by-side');
    const [count] = await queryRows<{ n: number }>(f.db(), sql`SELECT count(*)::int AS n FROM turns WHERE tenant_id = 'side-by-side'`);
    expect(count!.n).toBe([seed!, first!, second!].reduce((n, data) => n + data.messages.length / 2, 0));
  });

  it('fails only the import that cannot be written when others are written with it', async () => {
    const { store } = f.tenant('mixed');
    const [first, second, third] = sessions('bo');
    // Two checkpoints for one turn break a primary key inside the group's transaction.
    const checkpoint = (question: string) => ({ turn: 1, firstSeq: 1, lastSeq: 2, question, summary: 's', actionableSummary: 'a', source: 'rules' as const });
    const broken = { ...second!, checkpoints: [checkpoint('a'), checkpoint('b')] };
    const results = await Promise.allSettled([store.import(first!, 'importer'), store.import(broken, 'importer'), store.import(third!, 'importer')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const titles = await queryRows<{ title: string }>(f.db(), sql`SELECT title FROM conversations WHERE tenant_id = 'mixed' ORDER BY title`);
    expect(titles.map((r) => r.title)).toEqual([first!.conversation.title, third!.conversation.title].sort());
    await f.expectIndexExact('mixed');
  });
});
