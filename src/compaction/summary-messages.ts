import type { ChatMessage } from '../llm/messages.js';
import { clipChars } from './clip-text.js';
import { fitTranscript } from './fit-transcript.js';
import type { StructuralSummary, TurnDigest } from './structural-summary.js';
import type { HistoryTurn } from './conversation-turns.js';
import type { TurnCheckpoint } from './turn-checkpoint.js';

/** A stand-in question longer than this costs more than the detail is worth in a squeezed prompt. */
const RENDERED_QUESTION_CHARS = 500;
/** A turn without a checkpoint goes to the summariser as a transcript of at most this many tokens. */
const DIGEST_TRANSCRIPT_TOKENS = 600;

/*
 * Summaries go in as a user message answered by a short assistant one: the prompt keeps strict
 * user/assistant alternation, which some chat templates (llama.cpp, Mistral) insist on, and no
 * second system message appears mid-conversation, which others reject.
 */

/** A checkpointed turn: its question, and its checkpoint in place of the agent's messages. */
export function checkpointMessages(checkpoint: TurnCheckpoint): ChatMessage[] {
  const question = clipChars(checkpoint.question, RENDERED_QUESTION_CHARS) || '(no question)';
  return [
    { role: 'user', content: question },
    {
      role: 'assistant',
      content: `[Turn ${checkpoint.turn}, summarised; its messages are no longer shown] ${checkpoint.summary}\nWhat was done: ${checkpoint.actionableSummary}`,
      toolCalls: [],
    },
  ];
}

export function summaryMessages(summary: StructuralSummary): ChatMessage[] {
  // Each layer names its turns, so the model can ask for exactly those back (recall_turns).
  const layers = summary.layers.map((l) => `Turns ${l.fromTurn}-${l.throughTurn} (${l.level}): ${l.text}`).join('\n\n');
  return [
    {
      role: 'user',
      content: `Summary of turns ${summary.fromTurn}-${summary.throughTurn} of this conversation, which are no longer shown (oldest first):\n\n${layers}`,
    },
    { role: 'assistant', content: 'Understood: I will take those earlier turns from this summary.', toolCalls: [] },
  ];
}

/** A turn for the structural summariser: its stored checkpoint when there is one, never recomputed. */
export function turnDigest(turn: HistoryTurn, checkpoint: TurnCheckpoint | undefined): TurnDigest {
  if (!checkpoint) return { turn: turn.turn, text: fitTranscript(turn.messages, DIGEST_TRANSCRIPT_TOKENS) };
  return {
    turn: turn.turn,
    text: `User: ${clipChars(checkpoint.question, RENDERED_QUESTION_CHARS)}\nSummary: ${checkpoint.summary}\nDone: ${checkpoint.actionableSummary}`,
  };
}
