/**
 * Which words of a turn BM25 should key it by, on LongMemEval_S's tuning part: for each way of
 * composing a turn's indexed text (the user's message counted w times, the assistant's reply whole,
 * clipped or left out, the neighbouring messages and the date in or out), a BM25 index per question
 * over its turns, searched with the question. Prints session R_all@5 and turn R_all@10 per question
 * type. In memory and BM25 only: it chooses `TURN_KEY_WEIGHTS` (src/conversations/turn-record.ts),
 * whose effect through the whole search `npm run bench:longmemeval` then measures.
 *
 *   npx tsx scripts/bench/longmemeval-keys.ts
 */
import { clipChars } from '../../src/compaction/clip-text.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { dateInWords } from '../../src/text/date-in-words.js';
import { longMemEvalDate, readLongMemEval, sessionTurns } from './lib/longmemeval.js';

interface Keys {
  name: string;
  user: number;
  /** Characters of the reply kept; Infinity: all, 0: none. */
  reply: number;
  replyWeight?: number;
  neighbours: boolean;
  date: boolean;
}

const variants: Keys[] = [
  { name: 'user only (paper)', user: 1, reply: 0, neighbours: false, date: false },
  { name: 'memrag today', user: 1, reply: Infinity, neighbours: true, date: true },
  { name: 'user + reply', user: 1, reply: Infinity, neighbours: false, date: false },
  { name: 'user×2 + reply + nb', user: 2, reply: Infinity, neighbours: true, date: true },
  { name: 'user×3 + reply + nb', user: 3, reply: Infinity, neighbours: true, date: true },
  { name: 'user×4 + reply + nb', user: 4, reply: Infinity, neighbours: true, date: true },
  { name: 'user×3 + reply', user: 3, reply: Infinity, neighbours: false, date: true },
  { name: 'user×2 + reply 600', user: 2, reply: 600, neighbours: true, date: true },
  { name: 'user×3 + reply 600', user: 3, reply: 600, neighbours: true, date: true },
  { name: 'user + reply 300 + nb', user: 1, reply: 300, neighbours: true, date: true },
  { name: 'user×2 + reply 300 + nb', user: 2, reply: 300, neighbours: true, date: true },
  { name: 'user×5 + reply + nb', user: 5, reply: Infinity, neighbours: true, date: true },
  { name: 'user×6 + reply + nb', user: 6, reply: Infinity, neighbours: true, date: true },
  { name: 'user×4 + reply 1200 + nb', user: 4, reply: 1200, neighbours: true, date: true },
  { name: 'user×4 + reply 600 + nb', user: 4, reply: 600, neighbours: true, date: true },
];

const questions = readLongMemEval();
const types = [...new Set(questions.map((q) => q.question_type))].sort();
console.log(`${questions.length} questions; session R_all@5 / turn R_all@10`);
console.log(['keys'.padEnd(26), ...[...types, 'all'].map((t) => t.slice(0, 14).padStart(15))].join(''));
for (const v of variants) {
  const score = new Map<string, { s5: number; t10: number; n: number }>();
  for (const q of questions) {
    const index = new InMemoryBm25Index();
    const evidence: string[] = [];
    const sessionOf = new Map<string, string>();
    q.haystack_sessions.forEach((session, si) => {
      const sid = q.haystack_session_ids[si]!;
      const at = longMemEvalDate(q.haystack_dates[si]!);
      const turns = sessionTurns(session);
      turns.forEach((t, i) => {
        const id = `${sid}#${i}`;
        sessionOf.set(id, sid);
        if (t.hasAnswer) evidence.push(id);
        const reply = t.answers.join('\n');
        const parts: string[] = [];
        if (v.date) parts.push(dateInWords(at));
        if (v.neighbours && i > 0) parts.push(clipChars(turns[i - 1]!.answers.join('\n'), 300));
        for (let k = 0; k < v.user; k++) parts.push(t.question);
        if (v.reply > 0) for (let k = 0; k < (v.replyWeight ?? 1); k++) parts.push(v.reply === Infinity ? reply : clipChars(reply, v.reply));
        if (v.neighbours && i + 1 < turns.length) parts.push(clipChars(turns[i + 1]!.question, 300));
        index.add(id, parts.join('\n'));
      });
    });
    const ranked = index.search(q.question, { topK: 200 }).map((h) => h.id);
    const sessions = [...new Set(ranked.map((id) => sessionOf.get(id)!))];
    const s5 = q.answer_session_ids.every((s) => sessions.slice(0, 5).includes(s)) ? 1 : 0;
    const t10 = evidence.length > 0 && evidence.every((e) => ranked.slice(0, 10).includes(e)) ? 1 : 0;
    for (const t of [q.question_type, 'all']) {
      const r = score.get(t) ?? { s5: 0, t10: 0, n: 0 };
      r.s5 += s5;
      r.t10 += t10;
      r.n += 1;
      score.set(t, r);
    }
  }
  const cells = [...types, 'all'].map((t) => {
    const r = score.get(t)!;
    return `${(r.s5 / r.n).toFixed(2)}/${(r.t10 / r.n).toFixed(2)}`.padStart(15);
  });
  console.log([v.name.padEnd(26), ...cells].join(''));
}
