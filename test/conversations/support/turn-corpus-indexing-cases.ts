import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { dateInWords } from '../../../src/text/date-in-words.js';
import { exchange, exported, type TurnCorpusFixture } from './turn-corpus-fixture.js';

/** Indexing: a turn's date, neighbours and import, in whatever order the turns come. Registered inside the turns corpus contract's `describe`. */
export function turnCorpusIndexingCases(f: TurnCorpusFixture) {
  const { acme, expectIndexExact, rowsOf } = f;
  it('indexes each turn with its date in words and the message before it; the next question becomes its after, in BM25 only', async () => {
    const id = randomUUID();
    await acme().store.appendTurn({
      id,
      agentId: 'ana',
      userId: 'u-ana',
      messages: exchange('I adopted a beagle puppy yesterday.', 'Congratulations! What did you name the beagle?'),
    });
    expect(await acme().index.indexConversation(id, { turns: [1] })).toBe(1);
    const [first] = await rowsOf(id);
    expect(first).toMatchObject({ turn: 1, before: '', after: '', user_id: 'u-ana', question: 'I adopted a beagle puppy yesterday.' });
    expect(first!.embedded_text.split('\n')[0]).toBe(dateInWords(new Date(first!.at)));
    await expectIndexExact('acme');

    await acme().store.appendTurn({ id, agentId: 'ana', userId: 'u-ana', messages: exchange('Biscuit', 'Biscuit is a lovely name.', 'no memories found') });
    expect(await acme().index.indexConversation(id, { turns: [2] })).toBe(1);
    const [one, two] = await rowsOf(id);
    // The answer is the final text: neither the tool's result nor the text announcing the call.
    expect(two).toMatchObject({
      question: 'Biscuit',
      answer: 'Biscuit is a lovely name.',
      before: 'Congratulations! What did you name the beagle?',
      after: '',
    });
    expect(two!.embedded_text).toContain('Before: Congratulations! What did you name the beagle?');
    expect(one!.after).toBe('Biscuit');
    // Turn 1's vector and embedded text stay: only its postings took the new words.
    expect(one!.embedding).toBe(first!.embedding);
    expect(one!.embedded_text).toBe(first!.embedded_text);
    await expectIndexExact('acme');

    // Found by the neighbours' words: the name only turn 2 says, the breed only turn 1 says.
    const byName = (await acme().search.search('Biscuit', { agentId: 'ana', mode: 'text' })).hits;
    expect(byName.map((h) => h.turn).sort()).toEqual([1, 2]);
    const byBreed = (await acme().search.search('what is the name of my beagle', { agentId: 'ana', mode: 'text' })).hits;
    expect(byBreed.map((h) => h.turn).sort()).toEqual([1, 2]);
    expect(byBreed.find((h) => h.turn === 2)).toMatchObject({ conversationId: id, answer: 'Biscuit is a lovely name.', agentId: 'ana', userId: 'u-ana' });

    // Idempotent per (conversation, turn), and the backfill list reads what is indexed.
    expect(await acme().index.indexConversation(id)).toBe(0);
    expect((await acme().store.load(id, 'ana'))!.indexedTurns).toEqual([1, 2]);
    await expectIndexExact('acme');
  });

  it('indexes turns out of order to the same rows', async () => {
    const id = randomUUID();
    for (const n of [1, 2, 3]) await acme().store.appendTurn({ id, agentId: 'olga', messages: exchange(`question ${n} about kayaks`, `answer ${n}`) });
    expect(await acme().index.indexConversation(id, { turns: [3] })).toBe(1);
    expect(await acme().index.indexConversation(id, { turns: [1] })).toBe(1);
    expect(await acme().index.indexConversation(id, { turns: [2] })).toBe(1);
    expect((await rowsOf(id)).map((r) => [r.turn, r.before, r.after])).toEqual([
      [1, '', 'question 2 about kayaks'],
      [2, 'answer 1', 'question 3 about kayaks'],
      [3, 'answer 2', ''],
    ]);
    await expectIndexExact('acme');
  });

  it('finds the turns of a month by its name', async () => {
    const conversation = exported('dora', [
      { question: 'Book the dentist for Thursday.', answer: 'Booked the dentist.', at: '2026-05-12T09:00:00.000Z' },
      { question: 'Remind me to water the ferns.', answer: 'I will remind you about the ferns.', at: '2026-05-20T18:30:00.000Z' },
    ]);
    const later = exported('dora', [
      { question: 'Cancel the gym subscription.', answer: 'Cancelled the gym.', at: '2026-06-03T08:00:00.000Z' },
      { question: 'Which films are on tonight?', answer: 'Three films are on.', at: '2026-07-16T20:00:00.000Z' },
    ]);
    const may = await acme().store.import(conversation, 'dora');
    await acme().store.import(later, 'dora');
    const hits = (await acme().search.search('what did I say in May', { agentId: 'dora', mode: 'text', topK: 10 })).hits;
    expect(hits.map((h) => [h.conversationId, h.turn])).toEqual(
      expect.arrayContaining([
        [may.id, 1],
        [may.id, 2],
      ]),
    );
    expect(hits.every((h) => h.at.getUTCMonth() === 4)).toBe(true);
    expect(hits[0]!.at.toISOString()).toMatch(/^2026-05-/);
    // Tuesday 12 May 2026: the weekday is a word too.
    expect((await acme().search.search('tuesday', { agentId: 'dora', mode: 'text' })).hits.map((h) => h.question)).toEqual(['Book the dentist for Thursday.']);
    await expectIndexExact('acme');
  });

  it('indexes an imported conversation at import, searchable at once in every mode', async () => {
    const imported = await acme().store.import(
      exported('imma', [
        { question: 'My locker code is 4512.', answer: 'Noted: locker 4512.', at: '2025-03-01T10:00:00.000Z' },
        { question: 'And the bike lock?', answer: 'The bike lock is 9931.', at: '2025-03-01T10:01:00.000Z' },
      ]),
      'imma',
    );
    const rows = await rowsOf(imported.id);
    expect(rows.map((r) => [r.turn, r.before, r.after])).toEqual([
      [1, '', 'And the bike lock?'],
      [2, 'Noted: locker 4512.', ''],
    ]);
    for (const mode of ['hybrid', 'vector', 'text'] as const) {
      const [hit] = (await acme().search.search('locker code 4512', { agentId: 'imma', mode, topK: 1 })).hits;
      expect(hit, mode).toMatchObject({ conversationId: imported.id, turn: 1, question: 'My locker code is 4512.', userId: null });
      expect(hit!.ranks[mode === 'text' ? 'vector' : 'text'] === null || mode === 'hybrid').toBe(true);
    }
    expect((await acme().store.load(imported.id, 'imma'))!.indexedTurns).toEqual([1, 2]);
    await expectIndexExact('acme');
  });

  it("indexes an imported conversation's opening, which the assistant spoke, as a turn without a question", async () => {
    const at = '2025-04-02T08:00:00.000Z';
    const body = exported('opal', [{ question: 'Which gate do I board at?', answer: 'Gate B14, boarding at 9:40.', at }]);
    const opening = 'Good morning! Your flight to Lisbon leaves from terminal 2 today.';
    body.messages = [
      { seq: 1, turn: 1, role: 'assistant', content: opening, toolCalls: [], createdAt: at },
      ...body.messages.map((m) => ({ ...m, seq: m.seq + 1, turn: m.turn + 1 })),
    ];
    const imported = await acme().store.import(body, 'opal');
    const rows = await rowsOf(imported.id);
    expect(rows.map((r) => [r.turn, r.question, r.before, r.after])).toEqual([
      [1, '', '', 'Which gate do I board at?'],
      [2, 'Which gate do I board at?', opening, ''],
    ]);
    expect(rows[0]!.embedded_text).toBe(`${dateInWords(new Date(at))}\nAssistant: ${opening}`);
    for (const mode of ['hybrid', 'vector', 'text'] as const) {
      const [hit] = (await acme().search.search('flight to Lisbon terminal', { agentId: 'opal', mode, topK: 1 })).hits;
      expect(hit, mode).toMatchObject({ conversationId: imported.id, turn: 1, question: '', answer: opening });
    }
    expect((await acme().store.load(imported.id, 'opal'))!.indexedTurns).toEqual([1, 2]);
    await expectIndexExact('acme');
  });
}
