import type { AgentTurnState, ToolResult } from './agent-types.js';

/**
 * A circuit breaker per tool: after `threshold` errors in a row in one turn the tool is withdrawn,
 * no longer advertised, and a call to it is answered at once. A model that keeps calling a broken
 * tool otherwise spends the turn's iterations (and money) on it. The counts live in the turn's
 * state, so a turn paused for an approval or a client tool resumes with them.
 */
export interface ToolBreaker {
  isWithdrawn(name: string): boolean;
  /** Counts a call's result; the result that trips the breaker says so, for the model to read. */
  record<R extends Pick<ToolResult, 'content' | 'isError'>>(name: string, result: R): R;
  /** Whether any tool is withdrawn: while none is, the advertised tools need no filtering. */
  anyWithdrawn(): boolean;
}

const NO_BREAKER: ToolBreaker = { isWithdrawn: () => false, anyWithdrawn: () => false, record: (_name, result) => result };

export function createToolBreaker(state: AgentTurnState, threshold: number | undefined): ToolBreaker {
  // Without a threshold nothing is ever withdrawn beyond what a resumed turn brings: no counting.
  if (threshold === undefined && !state.withdrawn?.length) return NO_BREAKER;
  const withdrawn = new Set(state.withdrawn ?? []);
  return {
    isWithdrawn: (name) => withdrawn.has(name),
    anyWithdrawn: () => withdrawn.size > 0,
    record(name, result) {
      if (threshold === undefined) return result;
      state.toolErrors ??= {};
      if (!result.isError) {
        delete state.toolErrors[name];
        return result;
      }
      const errors = (state.toolErrors[name] ?? 0) + 1;
      state.toolErrors[name] = errors;
      if (errors < threshold || withdrawn.has(name)) return result;
      withdrawn.add(name);
      state.withdrawn = [...withdrawn];
      return { ...result, content: `${result.content}\n\n${withdrawalNote(name, errors)}` };
    },
  };
}

function withdrawalNote(name: string, errors: number): string {
  return `The tool '${name}' failed ${errors} times in a row and is withdrawn for the rest of this turn: do not call it again; answer with what you have, or use another tool.`;
}

/** The answer to a call of a tool already withdrawn. */
export function withdrawnResult(name: string): string {
  return `Error: the tool '${name}' is withdrawn for the rest of this turn after repeated errors; do not call it again.`;
}
