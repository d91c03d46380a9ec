import type { AssistantMessage, ToolCall, ToolMessage } from '../llm/messages.js';
import { clipChars } from './clip-text.js';
import { type CompletedTurn, type TurnCheckpoint, turnQuestion } from './turn-checkpoint.js';

const ANSWER_CHARS = 600;
const ARGUMENTS_CHARS = 120;
const RESULT_CHARS = 160;
const MAX_LISTED_CALLS = 8;

/**
 * A checkpoint built without a model: the question, the start of the answer, and each tool call
 * with how it ended. Coarser than the LLM's, but it never fails and costs nothing, which is what a
 * fallback must be.
 */
export function buildRuleBasedCheckpoint(turn: CompletedTurn): TurnCheckpoint {
  const question = turnQuestion(turn);
  const answer = finalAnswer(turn);
  const results = new Map<string, ToolMessage>();
  const calls: ToolCall[] = [];
  for (const m of turn.messages) {
    if (m.role === 'tool') results.set(m.toolCallId, m);
    if (m.role === 'assistant') calls.push(...m.toolCalls);
  }

  const summary = [
    `The user asked: ${clipChars(oneLine(question), 300)}`,
    answer ? `The assistant answered: ${clipChars(oneLine(answer), ANSWER_CHARS)}` : 'The turn ended without an answer.',
  ].join('\n');

  const lines: string[] = [];
  if (calls.length === 0) lines.push('No tools were called.');
  else {
    const listed = calls.slice(0, MAX_LISTED_CALLS).map((call) => {
      const result = results.get(call.id);
      const outcome = !result
        ? 'no result'
        : result.isError
          ? `error: ${clipChars(oneLine(result.content), RESULT_CHARS)}`
          : `ok: ${clipChars(oneLine(result.content), RESULT_CHARS)}`;
      return `- ${call.name}(${clipChars(oneLine(call.arguments), ARGUMENTS_CHARS)}) → ${outcome}`;
    });
    if (calls.length > MAX_LISTED_CALLS) listed.push(`- and ${calls.length - MAX_LISTED_CALLS} more calls`);
    lines.push(`Tools called (${calls.length}):`, ...listed);
    const errors = calls.filter((c) => results.get(c.id)?.isError).length;
    if (errors > 0) lines.push(`Errors: ${errors} of ${calls.length} calls failed.`);
  }
  lines.push(answer ? 'Result: answered.' : 'Result: no answer was given.');

  return {
    turn: turn.turn,
    firstSeq: turn.firstSeq,
    lastSeq: turn.lastSeq,
    question,
    summary,
    actionableSummary: lines.join('\n'),
    source: 'rules',
  };
}

function finalAnswer(turn: CompletedTurn): string {
  const last = turn.messages.filter((m): m is AssistantMessage => m.role === 'assistant' && m.toolCalls.length === 0).at(-1);
  return last?.content?.trim() ?? '';
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
