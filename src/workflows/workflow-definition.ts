import { z } from 'zod';
import { storable } from '../text/storable-string.js';

/** Bounds of a workflow definition. */
export const WORKFLOW_LIMITS = {
  nameMaxChars: 200,
  maxNodes: 50,
  maxEdges: 200,
  promptMaxChars: 20_000,
  whenMaxChars: 1_000,
  maxSteps: { min: 1, max: 200, default: 25 },
} as const;

const nodeId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'may contain only letters, digits, "_" and "-"');

// As an `agentId` (the namespace of memories): the agent a node runs.
const agentId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\w.:@-]+$/, 'may contain only letters, digits, "_", ".", ":", "@" and "-"');

export const workflowNodeSchema = z.strictObject({
  id: nodeId,
  agentId: agentId.meta({ description: 'The agent the step runs as, with its own settings.' }),
  prompt: storable(z.string().min(1).max(WORKFLOW_LIMITS.promptMaxChars)).meta({
    description: "The step's message: a template over `{{input}}`, `{{nodes.<id>.output}}` and `{{state.<key>}}`.",
  }),
});

export const edgeConditionSchema = z
  .union([
    z.strictObject({
      outputMatches: storable(z.string().min(1).max(WORKFLOW_LIMITS.whenMaxChars)).meta({ description: 'A regular expression (JavaScript syntax).' }),
    }),
    z.strictObject({ outputEquals: storable(z.string().max(WORKFLOW_LIMITS.whenMaxChars)).meta({ description: 'The whole output, trimmed, equals this.' }) }),
  ])
  .meta({ description: "Holds when the `from` node's output matches." });

export type EdgeCondition = z.output<typeof edgeConditionSchema>;

export const workflowEdgeSchema = z.strictObject({
  from: nodeId,
  to: nodeId,
  when: edgeConditionSchema.optional(),
});

const definitionShape = {
  name: storable(z.string().trim().min(1).max(WORKFLOW_LIMITS.nameMaxChars)),
  entry: nodeId.meta({ description: 'The node the run starts at.' }),
  nodes: z.array(workflowNodeSchema).min(1).max(WORKFLOW_LIMITS.maxNodes),
  edges: z
    .array(workflowEdgeSchema)
    .max(WORKFLOW_LIMITS.maxEdges)
    .default([])
    .meta({ description: "A node's outgoing edges are tried in order: the first whose `when` holds (or that has none) is taken; none: the run ends there." }),
  maxSteps: z
    .number()
    .int()
    .min(WORKFLOW_LIMITS.maxSteps.min)
    .max(WORKFLOW_LIMITS.maxSteps.max)
    .optional()
    .meta({ description: `Steps a run takes at most (default ${WORKFLOW_LIMITS.maxSteps.default}); past them it fails with stopReason \`max_steps\`.` }),
};

/** The graph's own rules, beside each field's: every node named exists, ids are unique, each regex compiles. */
export function checkGraph(
  def: { entry?: string; nodes?: Array<{ id: string }>; edges?: Array<{ from: string; to: string; when?: EdgeCondition | undefined }> },
  ctx: z.RefinementCtx,
): void {
  const ids = new Map<string, number>();
  (def.nodes ?? []).forEach((node, i) => {
    if (ids.has(node.id)) ctx.addIssue({ code: 'custom', path: ['nodes', i, 'id'], message: `duplicates the id of nodes.${ids.get(node.id)}` });
    else ids.set(node.id, i);
  });
  if (def.entry !== undefined && !ids.has(def.entry)) ctx.addIssue({ code: 'custom', path: ['entry'], message: `names no node of this workflow` });
  (def.edges ?? []).forEach((edge, i) => {
    if (!ids.has(edge.from)) ctx.addIssue({ code: 'custom', path: ['edges', i, 'from'], message: `names no node of this workflow` });
    if (!ids.has(edge.to)) ctx.addIssue({ code: 'custom', path: ['edges', i, 'to'], message: `names no node of this workflow` });
    if (edge.when && 'outputMatches' in edge.when) {
      const problem = regexProblem(edge.when.outputMatches);
      if (problem) ctx.addIssue({ code: 'custom', path: ['edges', i, 'when', 'outputMatches'], message: `does not compile: ${problem}` });
    }
  });
}

export const workflowDefinitionSchema = z.strictObject(definitionShape).superRefine(checkGraph);

export type WorkflowDefinition = z.output<typeof workflowDefinitionSchema>;
export type WorkflowNode = z.output<typeof workflowNodeSchema>;

/** The definition's fields, for the routes' bodies (create adds an id, a patch makes them optional). */
export const workflowDefinitionShape = definitionShape;

function regexProblem(source: string): string | undefined {
  try {
    new RegExp(source);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** A workflow as stored: its definition at its current version. */
export interface Workflow extends WorkflowDefinition {
  id: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkflowVersion {
  workflowId: string;
  version: number;
  definition: WorkflowDefinition;
  createdAt: Date;
}

/** A workflow's definition alone, without what the store adds. */
export function definitionOf(workflow: Workflow): WorkflowDefinition {
  const { id: _id, version: _v, createdAt: _c, updatedAt: _u, ...definition } = workflow;
  return definition;
}
