import type { EdgeCondition, WorkflowDefinition } from './workflow-definition.js';

/** Whether a node's output satisfies an edge's condition (none: always). */
export function conditionHolds(when: EdgeCondition | undefined, output: string): boolean {
  if (!when) return true;
  if ('outputEquals' in when) return output.trim() === when.outputEquals.trim();
  return new RegExp(when.outputMatches).test(output);
}

/** The node after `from`: the first of its edges, in order, whose condition holds; undefined ends the run. */
export function nextNode(definition: Pick<WorkflowDefinition, 'edges'>, from: string, output: string): string | undefined {
  return definition.edges.find((edge) => edge.from === from && conditionHolds(edge.when, output))?.to;
}
