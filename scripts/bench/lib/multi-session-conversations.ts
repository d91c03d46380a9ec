/**
 * A generated multi-session conversation benchmark for episodic recall: each user talks to the
 * assistant over many sessions (conversations) spread across months; facts about them are planted
 * in some turns, later changed or contradicted, and questions ask for them in other words. Every
 * question names the turns that hold its evidence. Seeded: the same options give the same data.
 *
 * Question types:
 *  - single: one turn holds the fact, stated in other words than the question's;
 *  - neighbour: the fact is the user's reply to the assistant's question, so the question's words
 *    sit in the turn before the evidence;
 *  - multi: several turns in different sessions each hold part of the answer;
 *  - latest: a fact changed; the evidence is the turn with the latest value, and the turn with the
 *    old value is its `superseded` predecessor, which should rank below it;
 *  - date: asked by month ("in March"), the month being the only thing that tells the turn apart.
 */
import { seededRandom } from '../../../testkit/vector-fixtures.js';

export type QuestionType = 'single' | 'neighbour' | 'multi' | 'latest' | 'date';

export interface GeneratedTurn {
  question: string;
  answer: string;
}

export interface GeneratedSession {
  /** Index within the user's sessions; the bench maps it to the conversation id the import gives. */
  session: number;
  at: Date;
  turns: GeneratedTurn[];
}

export interface EvidenceRef {
  session: number;
  /** 1-based, as stored. */
  turn: number;
}

export interface GeneratedQuestion {
  type: QuestionType;
  text: string;
  evidence: EvidenceRef[];
  /** For `latest`: the turn stating the value that was replaced. */
  superseded?: EvidenceRef;
}

export interface GeneratedUser {
  userId: string;
  sessions: GeneratedSession[];
  questions: GeneratedQuestion[];
}

export interface GenerateOptions {
  users: number;
  sessionsPerUser: number;
  seed: number;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
function pickDistinct<T>(rand: () => number, xs: readonly T[], n: number): T[] {
  const pool = [...xs];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out;
}

// Small talk that fills the sessions; several share words with the questions on purpose.
const FILLER: readonly GeneratedTurn[] = [
  { question: 'Can you suggest a quick vegetarian dinner?', answer: 'Try a chickpea curry with spinach: twenty minutes, one pan.' },
  { question: 'How long should I boil an egg for a runny yolk?', answer: 'About six minutes from boiling water, then into cold water.' },
  { question: "What's a good stretch for a stiff lower back?", answer: "A child's pose held for thirty seconds, repeated a few times." },
  { question: 'Any tips for sleeping better?', answer: 'Keep a regular bedtime, a dark room, and no screens for the last hour.' },
  { question: 'Can you explain what an index fund is?', answer: 'A fund that tracks a market index, so it holds many shares at low cost.' },
  { question: 'Recommend a classic novel for a long flight.', answer: 'Middlemarch is long and rewarding; The Remains of the Day is shorter.' },
  { question: 'How do I get coffee stains out of a white shirt?', answer: 'Rinse with cold water, then dab with diluted dish soap before washing.' },
  {
    question: 'My friend works as a nurse and is always tired. How can I help her?',
    answer: 'Offer practical help: a cooked meal or an errand run goes a long way.',
  },
  { question: 'What is the capital of Australia?', answer: 'Canberra, not Sydney, as many people guess.' },
  { question: 'How do I say thank you in Japanese?', answer: 'Arigatou gozaimasu is the polite form.' },
  { question: 'Is it worth learning to touch type?', answer: 'Yes: a few weeks of practice pays back for years.' },
  {
    question: 'Our city council wants to close the library on Sundays. Thoughts?',
    answer: 'You could write to your councillor or join the public consultation.',
  },
  { question: 'Write me a haiku about rain.', answer: 'Grey roofs drink the rain / a cat watches from the sill / puddles hold the sky.' },
  { question: 'How often should I water a cactus?', answer: 'Every two to three weeks in summer, barely at all in winter.' },
  { question: 'What should I pack for a weekend hike?', answer: 'Water, a rain jacket, snacks, a map, a first aid kit and a head torch.' },
  { question: 'Can you help me word an email asking for a deadline extension?', answer: 'Say what is late, why, and propose a new date you can keep.' },
  { question: 'Why do cats knead blankets?', answer: 'It is a kitten habit from nursing; it usually means they feel safe.' },
  { question: 'Give me a five minute workout I can do at my desk.', answer: 'Chair squats, desk push-ups, calf raises and a plank, one minute each.' },
  { question: 'How do I keep basil alive on a windowsill?', answer: 'Lots of light, water when the top of the soil is dry, pinch off flowers.' },
  { question: "What's the difference between a latte and a flat white?", answer: 'A flat white has less milk and a thinner layer of microfoam.' },
  { question: 'Which board games work well for two players?', answer: 'Patchwork, Jaipur and 7 Wonders Duel are all good with two.' },
  { question: 'Can you recommend a podcast about history?', answer: 'The Rest Is History and Hardcore History are both popular.' },
  { question: 'How do I fix a squeaky door hinge?', answer: 'A drop of oil or a rub of soap on the pin usually does it.' },
  {
    question: 'What are some good questions to ask at the end of an interview?',
    answer: 'Ask what success looks like in the first six months, and about the team.',
  },
  {
    question: 'Is it better to rent or buy a bike for a week in the mountains?',
    answer: 'Renting: you get a bike suited to the terrain and no transport hassle.',
  },
  { question: 'How much water should I drink on a hot day?', answer: 'More than usual: roughly two to three litres, more if you exercise.' },
  { question: 'Tell me a fun fact about octopuses.', answer: 'They have three hearts and blue blood.' },
  { question: 'How can I stop procrastinating on my taxes?', answer: 'Set a twenty minute timer and just gather the documents first.' },
];

const ACKS = ['That sounds great!', 'Good to know, thanks for telling me.', "Noted, I'll keep that in mind.", 'Oh, how exciting!', 'Thanks for sharing that.'];

interface FactKind {
  question: string;
  state(value: string): string;
  values: readonly string[];
  /** A later change of the value, worded differently. */
  change?: (value: string) => string;
  changeQuestion?: string;
}

const FACTS: readonly FactKind[] = [
  {
    question: 'What do I do for a living?',
    state: (v) => `I just signed the contract, I'm starting as ${v} on Monday.`,
    values: [
      'a paediatric nurse',
      'a sous-chef at a bistro',
      'a tax accountant',
      'a primary school teacher',
      'a structural engineer',
      'a veterinary assistant',
      'a bus driver',
      'a data analyst',
    ],
  },
  {
    question: 'Which city do I live in?',
    state: (v) => `We finally got the keys to our flat in ${v}.`,
    values: ['Lyon', 'Porto', 'Leeds', 'Gdansk', 'Utrecht', 'Bologna', 'Graz', 'Aarhus', 'Valencia', 'Bruges'],
    change: (v) => `Big news: we packed everything up and relocated to ${v} this week.`,
    changeQuestion: 'Which city do I live in now?',
  },
  {
    question: "What is my dog's name?",
    state: (v) => `We adopted a scruffy little terrier from the shelter and named him ${v}.`,
    values: ['Biscuit', 'Pickle', 'Rufus', 'Waffles', 'Ziggy', 'Bramble', 'Noodle', 'Pepper'],
  },
  {
    question: 'What car do I drive?',
    state: (v) => `Traded in the old hatchback, I'm now driving a ${v}.`,
    values: ['blue Skoda Octavia', 'red Mazda MX-5', 'grey Volvo V60', 'white Renault Zoe', 'green Mini Cooper', 'black Tesla Model 3'],
    change: (v) => `The garage wrote it off after the crash, so now I have a ${v}.`,
    changeQuestion: 'What car do I have at the moment?',
  },
  {
    question: "What is my sister's name?",
    state: (v) => `My younger sister ${v} is staying with us for the holidays.`,
    values: ['Ingrid', 'Mireille', 'Tamsin', 'Oksana', 'Beatriz', 'Henrike', 'Lucia', 'Maren'],
  },
  {
    question: 'Which sport do I play on weekends?',
    state: (v) => `Joined a local club, Saturdays are for ${v} now.`,
    values: ['water polo', 'ultimate frisbee', 'badminton', 'field hockey', 'bouldering', 'rugby sevens', 'table tennis'],
    change: (v) => `Quit the club, my knees are done. I've switched to ${v} instead.`,
    changeQuestion: 'Which sport am I doing on weekends these days?',
  },
  {
    question: "What is my partner's job?",
    state: (v) => `Tom got the offer, he'll be working as ${v}.`,
    values: ['a park ranger', 'a dental hygienist', 'an air traffic controller', 'a locksmith', 'a radio producer', 'a beekeeper'],
  },
];

// Facts given as the reply to the assistant's question: the question's words are in the turn before.
const NEIGHBOUR_FACTS: readonly { lead: GeneratedTurn; reply(value: string): string; question: string; values: readonly string[] }[] = [
  {
    lead: { question: 'Can you help me plan meals for next week?', answer: 'Happy to. Do you have any dietary restrictions or allergies I should know about?' },
    reply: (v) => `Yes, ${v} makes me really ill, so none of that please.`,
    question: 'What dietary restrictions do I have?',
    values: ['shellfish', 'peanut', 'gluten', 'dairy', 'sesame', 'egg'],
  },
  {
    lead: { question: 'I want to buy my mum a birthday present.', answer: 'Lovely! What kind of hobbies does your mother enjoy?' },
    reply: (v) => `She spends every free minute on ${v}.`,
    question: "What is my mother's hobby?",
    values: ['pottery', 'birdwatching', 'crossword puzzles', 'quilting', 'salsa dancing', 'orienteering'],
  },
  {
    lead: { question: 'Help me pick a gym membership.', answer: 'Sure. Which days of the week are you usually free to train?' },
    reply: (v) => `Only ${v}, the rest of the week is chaos.`,
    question: 'Which days am I free to go to the gym?',
    values: ['Tuesday and Thursday evenings', 'Monday mornings', 'Wednesday lunchtimes', 'Friday afternoons', 'Sunday mornings'],
  },
];

// Several turns, each holding part of the answer.
const MULTI_FACTS: readonly { state(value: string): string; question: string; values: readonly string[] }[] = [
  {
    state: (v) => `Been practising the ${v} every evening this month.`,
    question: 'Which instruments do I play?',
    values: ['cello', 'ukulele', 'trumpet', 'harmonica', 'banjo', 'oboe'],
  },
  {
    state: (v) => `Back from a long weekend in ${v}, what a trip.`,
    question: 'Which places have I visited on trips?',
    values: ['Tallinn', 'Seville', 'Ljubljana', 'Reykjavik', 'Naples', 'Krakow', 'Galway'],
  },
];

// Told in one month; asked by that month.
const DATED_FACTS: readonly { state(value: string): string; question(month: string): string; values: readonly string[] }[] = [
  {
    state: (v) => `Spent the whole day repainting the ${v}.`,
    question: (m) => `What did I repaint in ${m}?`,
    values: ['garden shed', 'spare bedroom', 'kitchen cabinets', 'front door', 'garage floor'],
  },
];

/** The users, their sessions and their questions. */
export function generateConversations(options: GenerateOptions): GeneratedUser[] {
  const rand = seededRandom(options.seed);
  const start = Date.UTC(2026, 0, 5, 9);
  const users: GeneratedUser[] = [];
  for (let u = 0; u < options.users; u++) {
    const sessions: GeneratedSession[] = [];
    for (let s = 0; s < options.sessionsPerUser; s++) {
      // About one session a week, over half a year and more.
      const at = new Date(start + s * 7 * 86_400_000 + Math.floor(rand() * 5 * 86_400_000) + Math.floor(rand() * 10) * 3_600_000);
      const turns = pickDistinct(rand, FILLER, 4 + Math.floor(rand() * 3)).map((t) => ({ ...t }));
      sessions.push({ session: s, at, turns });
    }
    const questions: GeneratedQuestion[] = [];
    const used = new Set<number>();
    // A session not used yet by another planted fact, from a range of the user's sessions.
    const freeSession = (from: number, to: number) => {
      for (let tries = 0; tries < 100; tries++) {
        const s = from + Math.floor(rand() * Math.max(1, to - from));
        if (!used.has(s)) {
          used.add(s);
          return s;
        }
      }
      return from + Math.floor(rand() * Math.max(1, to - from));
    };
    // Where a planted turn ends up is known once every turn is planted (a later one may go before it).
    const placed = new Map<EvidenceRef, GeneratedTurn>();
    /** Puts a turn (after `lead`, when given) at a random place in the session. */
    const plant = (session: number, turn: GeneratedTurn, lead?: GeneratedTurn): EvidenceRef => {
      const turns = sessions[session]!.turns;
      const at = 1 + Math.floor(rand() * (turns.length - 1));
      turns.splice(at, 0, ...(lead ? [lead, turn] : [turn]));
      const ref = { session, turn: 0 };
      placed.set(ref, turn);
      return ref;
    };
    const n = options.sessionsPerUser;

    for (const fact of FACTS) {
      const [first, second] = pickDistinct(rand, fact.values, 2) as [string, string];
      const early = freeSession(0, Math.floor(n / 2));
      const stated = plant(early, { question: fact.state(first), answer: pick(rand, ACKS) });
      if (fact.change && fact.changeQuestion) {
        const late = freeSession(Math.floor(n / 2), n);
        const changed = plant(late, { question: fact.change(second), answer: pick(rand, ACKS) });
        questions.push({ type: 'latest', text: fact.changeQuestion, evidence: [changed], superseded: stated });
      } else {
        questions.push({ type: 'single', text: fact.question, evidence: [stated] });
      }
    }
    for (const fact of NEIGHBOUR_FACTS) {
      const session = freeSession(0, n);
      const value = pick(rand, fact.values);
      const evidence = plant(session, { question: fact.reply(value), answer: pick(rand, ACKS) }, fact.lead);
      questions.push({ type: 'neighbour', text: fact.question, evidence: [evidence] });
    }
    for (const fact of MULTI_FACTS) {
      const values = pickDistinct(rand, fact.values, 3);
      const evidence = values.map((v) => plant(freeSession(0, n), { question: fact.state(v), answer: pick(rand, ACKS) }));
      questions.push({ type: 'multi', text: fact.question, evidence });
    }
    for (const fact of DATED_FACTS) {
      // Two of them, months apart: only the month tells which one is asked for.
      const [a, b] = pickDistinct(rand, fact.values, 2) as [string, string];
      const first = freeSession(0, Math.floor(n / 3));
      const second = freeSession(Math.floor((2 * n) / 3), n);
      const refA = plant(first, { question: fact.state(a), answer: pick(rand, ACKS) });
      const refB = plant(second, { question: fact.state(b), answer: pick(rand, ACKS) });
      const monthA = MONTHS[sessions[first]!.at.getUTCMonth()]!;
      const monthB = MONTHS[sessions[second]!.at.getUTCMonth()]!;
      if (monthA !== monthB) {
        questions.push({ type: 'date', text: fact.question(monthA), evidence: [refA] });
        questions.push({ type: 'date', text: fact.question(monthB), evidence: [refB] });
      }
    }
    for (const [ref, turn] of placed) ref.turn = sessions[ref.session]!.turns.indexOf(turn) + 1;
    users.push({ userId: `user-${u + 1}`, sessions, questions });
  }
  return users;
}
