import type { ChatMessage } from '../llm/messages.js';
import { clipChars } from './clip-text.js';

/** The user's question as a checkpoint keeps it. */
export const CHECKPOINT_QUESTION_MAX_CHARS = 2_000;

/**
 * One finished turn of a conversation, condensed: what the user asked, what came of it (`summary`)
 * and what was done to get there (`actionableSummary`: tools called, errors, results), so a later
 * prompt can stand it in for the turn's messages. Written once, after the turn, and reused by
 * every later compaction.
 */
export interface TurnCheckpoint {
  /** 1-based position of the turn in its conversation. */
  turn: number;
  /** The turn's messages, as stored sequence numbers (inclusive). */
  firstSeq: number;
  lastSeq: number;
  question: string;
  summary: string;
  actionableSummary: string;
  /** Who wrote it: the LLM, or the rule-based fallback. */
  source: 'llm' | 'rules';
}

/** A turn as its checkpoint writer sees it: the user's message first, then the agent's. */
export interface CompletedTurn {
  turn: number;
  firstSeq: number;
  lastSeq: number;
  messages: ChatMessage[];
}

/** The turn's question: its first user message, clipped. */
export function turnQuestion(turn: CompletedTurn): string {
  const user = turn.messages.find((m) => m.role === 'user');
  return clipChars((user?.content ?? '').trim(), CHECKPOINT_QUESTION_MAX_CHARS);
}
