import { runInNewContext } from 'node:vm';
import type { EdgeCondition, WorkflowDefinition } from './workflow-definition.js';

/**
 * How long one `outputMatches` test may take. A pattern such as `(a+)+$` backtracks exponentially
 * on a long model answer, and the test runs on the event loop every tenant shares; a sandbox with a
 * timeout stops it. 50 ms is far above any sane pattern's time on the capped output.
 */
export const EDGE_MATCH_TIMEOUT_MS = 50;

/** `outputMatches` tests at most this much of a node's output (its start): bounds the work per edge. */
export const EDGE_MATCH_MAX_CHARS = 100_000;

/** An edge's regex ran past its time bound: the workflow run fails, naming the edge. */
export class EdgeMatchTimeoutError extends Error {
  constructor(
    readonly edgeIndex: number,
    readonly from: string,
  ) {
    super(`edges.${edgeIndex}.when.outputMatches took longer than ${EDGE_MATCH_TIMEOUT_MS} ms on node ${from}'s output`);
    this.name = 'EdgeMatchTimeoutError';
  }
}

/** Whether `pattern` matches the output's first `EDGE_MATCH_MAX_CHARS`; throws when it runs out of time. */
function matchesBounded(pattern: string, output: string): boolean {
  return (
    runInNewContext('new RegExp(pattern).test(output)', { pattern, output: output.slice(0, EDGE_MATCH_MAX_CHARS) }, { timeout: EDGE_MATCH_TIMEOUT_MS }) === true
  );
}

function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}

/** Whether a node's output satisfies an edge's condition (none: always). */
export function conditionHolds(when: EdgeCondition | undefined, output: string): boolean {
  if (!when) return true;
  if ('outputEquals' in when) return output.trim() === when.outputEquals.trim();
  return matchesBounded(when.outputMatches, output);
}

/**
 * The node after `from`: the first of its edges, in order, whose condition holds; undefined ends
 * the run. An edge whose regex runs out of time throws `EdgeMatchTimeoutError`.
 */
export function nextNode(definition: Pick<WorkflowDefinition, 'edges'>, from: string, output: string): string | undefined {
  for (const [i, edge] of definition.edges.entries()) {
    if (edge.from !== from) continue;
    try {
      if (conditionHolds(edge.when, output)) return edge.to;
    } catch (error) {
      if (isTimeout(error)) throw new EdgeMatchTimeoutError(i, from);
      throw error;
    }
  }
  return undefined;
}
