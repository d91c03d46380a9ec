import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** One LongMemEval question as the release stores it (see ../shared/datasets/longmemeval-s/README.md). */
export interface LongMemEvalQuestion {
  question_id: string;
  question_type: string;
  question: string;
  /** `2023/05/20 (Sat) 02:21`: the moment the question is asked. */
  question_date: string;
  answer: unknown;
  answer_session_ids: string[];
  haystack_session_ids: string[];
  haystack_dates: string[];
  haystack_sessions: { role: 'user' | 'assistant'; content: string; has_answer?: boolean }[][];
}

export const LONGMEMEVAL_TUNING = resolve(import.meta.dirname, '../../../../shared/datasets/longmemeval-s/tuning.jsonl.gz');

export function readLongMemEval(path = LONGMEMEVAL_TUNING): LongMemEvalQuestion[] {
  return gunzipSync(readFileSync(path))
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LongMemEvalQuestion);
}

/** `2023/05/20 (Sat) 02:21` as a UTC instant (the release gives no zone; UTC keeps every date as written). */
export function longMemEvalDate(text: string): Date {
  const m = /^(\d{4})\/(\d{2})\/(\d{2}) \(\w+\) (\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) throw new Error(`not a LongMemEval date: ${text}`);
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5])));
}

/** A session's messages as turns: a user message and the replies after it. */
export interface SessionTurn {
  /** '' for the assistant's opening (replies before the session's first user message). */
  question: string;
  answers: string[];
  /** Some message of the turn holds evidence (`has_answer`). */
  hasAnswer: boolean;
}

/**
 * The session cut into turns. Replies before the first user message (313 of the tuning part's
 * sessions open with the assistant) are a turn of their own, with no question, as memrag imports
 * an opening.
 */
export function sessionTurns(session: LongMemEvalQuestion['haystack_sessions'][number]): SessionTurn[] {
  const turns: SessionTurn[] = [];
  for (const m of session) {
    if (m.role === 'user') turns.push({ question: m.content, answers: [], hasAnswer: m.has_answer === true });
    else {
      if (turns.length === 0) turns.push({ question: '', answers: [], hasAnswer: false });
      const t = turns[turns.length - 1]!;
      t.answers.push(m.content);
      t.hasAnswer ||= m.has_answer === true;
    }
  }
  return turns;
}
