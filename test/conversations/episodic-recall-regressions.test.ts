import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationExport } from '../../src/conversations/conversation-types.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import { createTurnIndex } from '../../src/conversations/turn-index.js';
import { type TurnSearch, createTurnSearch } from '../../src/conversations/turn-search.js';
import type { Database } from '../../src/db/database.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type DatabaseDriver, describeOnDrivers } from '../support/database-drivers.js';

/**
 * Episodic recall's kinds of question that lost answer sessions plain BM25 finds (issue 59): two
 * sessions compared with "first", a time "N days ago" read against `asOf`, a month named in the
 * question. Each is a user's dated sessions among distractors; both answer sessions must be among
 * the first five, in the turn list and as conversations, in every mode that reads words.
 */
const embedder = createHashEmbedder(64);
const AGENT = 'recall';

interface Session {
  at: string;
  turns: [question: string, answer: string][];
}

function exported(userId: string, session: Session): ConversationExport {
  const start = new Date(session.at).getTime();
  const at = (i: number) => new Date(start + i * 60_000).toISOString();
  return {
    format: 'memrag.conversation',
    version: 1,
    conversation: { id: randomUUID(), agentId: AGENT, userId, title: session.turns[0]![0], createdAt: at(0), updatedAt: at(session.turns.length - 1) },
    messages: session.turns.flatMap(([question, answer], i) => [
      { seq: 2 * i + 1, turn: i + 1, role: 'user' as const, content: question, createdAt: at(i) },
      { seq: 2 * i + 2, turn: i + 1, role: 'assistant' as const, content: answer, toolCalls: [], createdAt: at(i) },
    ]),
    checkpoints: [],
    summary: null,
  };
}

/** Small talk that shares the questions' common words ("first", "set up", "days", "new", "June") but none of their subjects. */
const DISTRACTORS: [question: string, answer: string][][] = [
  [['What should I pack first for a weekend away?', 'Start with documents, then clothes for two days.']],
  [['I set up a new savings account at the bank.', 'A good first step toward your goals.']],
  [['Which smart watch would you recommend?', 'Most smart watches today track sleep and steps.']],
  [['My new phone came with a case.', 'Enjoy the new device.']],
  [['I spent a few days reading a new novel.', 'Which novel was it?']],
  [['What is the first thing to do after moving in?', 'Change the locks and set up the utilities.']],
  [['I joined a book club at the library.', 'Book clubs are a great way to meet people.']],
  [['The event at the museum was fun.', 'Museums often run evening events.']],
  [['I bought new running shoes.', 'New shoes need a few days to break in.']],
  [['How many days does paint need to dry?', 'About two days for most interior paint.']],
];

/** A session a day for the days given, each from the distractors in turn. */
const distractorSessions = (days: string[]): Session[] => days.map((day, i) => ({ at: `${day}T09:00:00.000Z`, turns: DISTRACTORS[i % DISTRACTORS.length]! }));

function episodicRecallRegressions(driver: DatabaseDriver) {
  let database: Database | undefined;
  let search: TurnSearch;
  let importAs: (userId: string, session: Session) => Promise<string>;

  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, embedder);
    const tenantId = 'episodic';
    const index = createTurnIndex({ db: database.db, embedder, tenantId });
    const store = createPgConversationStore({ db: database.db, tenantId, turnIndex: index });
    search = createTurnSearch({ db: database.db, embedder, tenantId });
    importAs = async (userId, session) => (await store.import(exported(userId, session), AGENT, userId)).id;
  });
  afterAll(async () => {
    await database?.close();
  });

  /**
   * The first five distinct conversations of the turn list, in hybrid and text modes, and the first
   * five conversations as `groupBy: "conversation"` ranks them by words alone. (Ranked in hybrid
   * mode, conversations follow the vector side's feedback, which in a dozen sessions moves the
   * query to the mean of them all: not what these built conversations can show.)
   */
  async function expectTopFive(userId: string, query: string, asOf: Date, wanted: string[]) {
    for (const mode of ['hybrid', 'text'] as const) {
      const { hits } = await search.search(query, { agentId: AGENT, userId, mode, topK: 50, asOf });
      expect([...new Set(hits.map((h) => h.conversationId))].slice(0, 5), mode).toEqual(expect.arrayContaining(wanted));
    }
    const { conversations } = await search.searchConversations(query, { agentId: AGENT, userId, mode: 'text', topK: 5, asOf });
    expect(
      conversations.map((c) => c.conversationId),
      'conversations',
    ).toEqual(expect.arrayContaining(wanted));
  }

  it('keeps both sessions a "which first" comparison needs among the first five', async () => {
    const user = 'first';
    const thermostat = await importAs(user, {
      at: '2026-04-12T18:00:00.000Z',
      turns: [
        ['I finally set up the smart thermostat in the hallway.', 'Nice, a smart thermostat can save on heating.'],
        ['The thermostat app keeps asking for a schedule.', 'Set a weekday and a weekend schedule.'],
      ],
    });
    const router = await importAs(user, {
      at: '2026-05-03T18:00:00.000Z',
      turns: [['The new router arrived and I got it working tonight.', 'Place the router high and central for coverage.']],
    });
    for (const session of distractorSessions(['2026-04-01', '2026-04-05', '2026-04-20', '2026-05-01', '2026-05-10', '2026-05-15', '2026-06-01', '2026-06-05']))
      await importAs(user, session);
    await expectTopFive(user, 'Which device did I set up first, the smart thermostat or the new router?', new Date('2026-06-10T23:59:59Z'), [
      thermostat,
      router,
    ]);
  });

  it('reads "N days ago" against asOf, not the clock, and keeps the sessions dated on that day number among the rest', async () => {
    const user = 'days-ago';
    const asOf = new Date('2026-06-30T23:59:59Z');
    // Five days before asOf; sessions dated on the 5th of a month say the question's "5" in their date's words.
    const challenge = await importAs(user, {
      at: '2026-06-25T19:00:00.000Z',
      turns: [['I took part in the photo challenge on social media today.', 'Sounds like a fun way to share photos.']],
    });
    const earlier = await importAs(user, {
      at: '2026-05-02T19:00:00.000Z',
      turns: [['I posted a poll on social media about paint colours.', 'Polls get people talking.']],
    });
    for (const session of distractorSessions(['2026-02-05', '2026-03-05', '2026-04-05', '2026-05-05', '2026-06-05', '2026-06-15', '2026-06-28']))
      await importAs(user, session);
    const query = 'What was the social media activity I participated in 5 days ago?';
    await expectTopFive(user, query, asOf, [challenge, earlier]);
    for (const mode of ['hybrid', 'text'] as const) {
      const asked = { agentId: AGENT, userId: user, mode, topK: 50, asOf };
      const { hits, timeWindow } = await search.search(query, asked);
      // Five days before asOf, not before the clock: the window holds the session said then.
      expect(timeWindow!.from.getTime()).toBeLessThan(Date.parse('2026-06-25T19:00:00Z'));
      expect(timeWindow!.to.getTime()).toBeGreaterThan(Date.parse('2026-06-25T19:00:00Z'));
      const unfavoured = (await search.search(query, { ...asked, timeWindowBoost: 0 })).hits;
      const placeOf = (list: typeof hits) => list.findIndex((h) => h.conversationId === challenge);
      expect(placeOf(hits), mode).toBeLessThanOrEqual(placeOf(unfavoured));
    }
  });

  it('keeps a session outside a month the question names among the first five', async () => {
    const user = 'month';
    const bbq = await importAs(user, {
      at: '2026-06-14T17:00:00.000Z',
      turns: [['We had our first BBQ of the summer at the lake house.', 'Lovely, what did you grill?']],
    });
    const camping = await importAs(user, {
      at: '2026-05-23T08:00:00.000Z',
      turns: [['Back from a camping trip in the mountains, two nights in a tent.', 'Camping in May can be chilly at night.']],
    });
    // June is crowded: every distractor but one said in the month the question names.
    for (const session of distractorSessions([
      '2026-05-04',
      '2026-06-01',
      '2026-06-03',
      '2026-06-06',
      '2026-06-09',
      '2026-06-12',
      '2026-06-17',
      '2026-06-20',
      '2026-06-24',
      '2026-06-27',
    ]))
      await importAs(user, session);
    await expectTopFive(user, 'Which came first, the BBQ event in June or the camping trip?', new Date('2026-07-10T23:59:59Z'), [bbq, camping]);
  });
}

describeOnDrivers('episodic recall regressions', (driver) => {
  describe('questions plain BM25 answers', () => episodicRecallRegressions(driver));
});
