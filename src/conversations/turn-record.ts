import { clipChars } from '../compaction/clip-text.js';
import { dateInWords } from '../text/date-in-words.js';

/** A stored message as turn indexing reads it: stored rows and imported exports alike. */
export interface TurnMessage {
  turn: number;
  role: 'user' | 'assistant' | 'tool';
  content: string | null;
  createdAt: Date;
}

/** One turn as the turns corpus holds it. */
export interface TurnRecord {
  turn: number;
  /** The user's message; '' for a conversation's opening, which the assistant spoke. */
  question: string;
  /** The agent's final text (tool calls and results left out); '' when it gave none. */
  answer: string;
  /** The previous turn's answer, clipped; '' on a first turn. */
  before: string;
  /** The next turn's question, clipped; '' until there is one. */
  after: string;
  /** When the question was asked. */
  at: Date;
}

/**
 * The neighbours are context, not the turn: enough to carry what "it" or "yes" refers to (the
 * question the answer before asked), short enough not to drown the turn's own words.
 */
export const NEIGHBOUR_MAX_CHARS = 300;

/**
 * The turns of an ordered run of messages (by `seq`), each with its neighbours' text. A turn
 * without a user message is an imported conversation's opening (the assistant spoke first): it is
 * kept with an empty question when the assistant said something, since what it said is as much
 * the conversation's past as any reply. A turn with neither is left out.
 */
export function turnRecords(messages: readonly TurnMessage[]): TurnRecord[] {
  const byTurn = new Map<number, { question: string | undefined; answer: string; at: Date | undefined }>();
  for (const m of messages) {
    let t = byTurn.get(m.turn);
    if (!t) byTurn.set(m.turn, (t = { question: undefined, answer: '', at: undefined }));
    if (m.role === 'user' && t.question === undefined) {
      t.question = m.content ?? '';
      t.at = m.createdAt;
    }
    // The last assistant text is the answer: earlier ones only announced tool calls.
    if (m.role === 'assistant' && m.content && m.content.trim() !== '') {
      t.answer = m.content;
      t.at ??= m.createdAt;
    }
  }
  const ordered = [...byTurn.entries()].sort(([a], [b]) => a - b);
  return ordered.flatMap(([turn, t]) => {
    if (!t.at || (t.question === undefined && t.answer === '')) return [];
    const previous = byTurn.get(turn - 1);
    const next = byTurn.get(turn + 1);
    return [
      {
        turn,
        question: t.question ?? '',
        answer: t.answer,
        before: clipChars(previous?.answer.trim() ?? '', NEIGHBOUR_MAX_CHARS),
        after: clipChars(next?.question?.trim() ?? '', NEIGHBOUR_MAX_CHARS),
        at: t.at,
      },
    ];
  });
}

/**
 * What the turn's vector is made of: its date in words, the message before it, the question and
 * the answer. The next question stays out: it arrives later, and the vector is never recomputed
 * for it (BM25 indexes it, see `turnBm25Text`).
 */
export function turnEmbeddedText(record: Pick<TurnRecord, 'at' | 'before' | 'question' | 'answer'>): string {
  const lines = [dateInWords(record.at)];
  if (record.before !== '') lines.push(`Before: ${record.before}`);
  if (record.question !== '') lines.push(`User: ${record.question}`);
  lines.push(`Assistant: ${record.answer}`);
  return lines.join('\n');
}

/**
 * How many times BM25 counts the user's message of a turn. The user's own words are what a later
 * question echoes; an assistant's reply runs to thousands of characters (LongMemEval: 1,715 at the
 * median against 185 for the user's) and would otherwise outweigh them. Chosen on LongMemEval's
 * tuning part by scripts/bench/longmemeval-keys.ts: session R_all@5 / turn R_all@10 0.83 / 0.80
 * at 1, 0.84 / 0.83 at 3, 0.85 / 0.83 at 4 and 5, 0.85 / 0.84 at 6 (docs/benchmarks/longmemeval.md).
 */
export const TURN_QUESTION_WEIGHT = 4;

/**
 * Names how `turnBm25Text` keys a turn: postings written under another version are rebuilt at
 * start, as for another analyzer (see `turnKeysAnalyzer`).
 */
export const TURN_KEYS_VERSION = 2;

/**
 * What BM25 indexes for a turn: its date in words, the message before it, the user's message
 * (counted `TURN_QUESTION_WEIGHT` times), the answer, the next turn's question, and the facts an
 * LLM extracted from it, once it has.
 */
export function turnBm25Text(record: Pick<TurnRecord, 'at' | 'before' | 'question' | 'answer' | 'after'> & { facts?: string }): string {
  const lines = [dateInWords(record.at)];
  if (record.before !== '') lines.push(record.before);
  if (record.question !== '') for (let i = 0; i < TURN_QUESTION_WEIGHT; i++) lines.push(record.question);
  lines.push(record.answer);
  if (record.after !== '') lines.push(record.after);
  if (record.facts) lines.push(record.facts);
  return lines.join('\n');
}
