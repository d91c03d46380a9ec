import { RunConflictError, RunInputError } from './run-types.js';

/**
 * The answers to a run's pending calls, by call id: every pending call answered once. An id the
 * run is not waiting on (unknown, or answered already) is a conflict; a missing or repeated one
 * is the request's mistake.
 */
export function answersFor<A extends { toolCallId: string }, V>(
  field: string,
  pending: readonly { id: string }[],
  answers: readonly A[],
  value: (answer: A) => V,
): Map<string, V> {
  const waiting = new Set(pending.map((c) => c.id));
  const byId = new Map<string, V>();
  for (const [i, answer] of answers.entries()) {
    if (byId.has(answer.toolCallId)) throw new RunInputError(`${field}.${i}.toolCallId`, `repeats tool call ${JSON.stringify(answer.toolCallId)}`);
    if (!waiting.has(answer.toolCallId)) {
      throw new RunConflictError(
        'tool_call_not_pending',
        `Tool call ${JSON.stringify(answer.toolCallId)} is not waiting for an answer (unknown, or answered already)`,
        {
          toolCallId: answer.toolCallId,
        },
      );
    }
    byId.set(answer.toolCallId, value(answer));
  }
  const missing = [...waiting].filter((id) => !byId.has(id));
  if (missing.length > 0)
    throw new RunInputError(field, `misses tool call${missing.length > 1 ? 's' : ''} ${missing.map((id) => JSON.stringify(id)).join(', ')}`);
  return byId;
}
