import { z } from 'zod';
import { WORKFLOW_LIMITS, checkGraph, workflowDefinitionShape, workflowEdgeSchema } from '../../workflows/workflow-definition.js';
import { agentIdSchema, queryInt, userIdSchema } from './memory-schemas.js';

/** Every input limit of the workflow routes, in one place. */
export const WORKFLOW_ROUTE_LIMITS = {
  pageDefault: 20,
  pageMax: 200,
  cursorMaxChars: 512,
  inputMaxChars: 100_000,
} as const;

const workflowIdSchema = agentIdSchema;

export const workflowIdParams = z.strictObject({ id: workflowIdSchema });

const pageQuery = {
  limit: queryInt(1, WORKFLOW_ROUTE_LIMITS.pageMax).default(WORKFLOW_ROUTE_LIMITS.pageDefault),
  cursor: z.string().max(WORKFLOW_ROUTE_LIMITS.cursorMaxChars).optional(),
};

export const listWorkflowsQuery = z.strictObject(pageQuery);
export const listWorkflowVersionsQuery = z.strictObject(pageQuery);

/** `POST /v1/workflows`: the definition, and the id when the caller chooses it. */
export const createWorkflowBody = z
  .strictObject({
    id: workflowIdSchema.optional().meta({ description: "A new UUID when absent; a workflow's id never changes." }),
    ...workflowDefinitionShape,
  })
  .superRefine(checkGraph)
  .meta({ id: 'CreateWorkflowBody' });

const s = workflowDefinitionShape;

/** `PATCH /v1/workflows/{id}`: the fields given replace the current ones whole; the result is checked as a whole. */
export const patchWorkflowBody = z
  .strictObject({
    name: s.name.optional(),
    entry: s.entry.optional(),
    nodes: s.nodes.optional(),
    edges: z.array(workflowEdgeSchema).max(WORKFLOW_LIMITS.maxEdges).optional(),
    maxSteps: s.maxSteps.nullable().meta({ description: 'null clears it: the default (25) applies again.' }),
  })
  .meta({ id: 'PatchWorkflowBody', description: 'Only the fields given change, each replaced whole; a change writes a new version.' });

export const runWorkflowBody = z
  .strictObject({
    input: z
      .union([z.string().max(WORKFLOW_ROUTE_LIMITS.inputMaxChars), z.record(z.string(), z.unknown())])
      .meta({ description: "What `{{input}}` is filled with (an object as JSON); an object's keys also start the run's `state`." }),
    userId: userIdSchema.optional().meta({ description: 'The user every step runs for (their memories and conversations).' }),
    stream: z
      .boolean()
      .optional()
      .meta({ description: "Answer as Server-Sent Events: each step's `delegate_start` and `delegate_end`, then `done` with the reply." }),
  })
  .meta({ id: 'RunWorkflowBody' });

const node = z.object({ id: z.string(), agentId: z.string(), prompt: z.string() });
const edge = z.object({
  from: z.string(),
  to: z.string(),
  when: z.union([z.object({ outputMatches: z.string() }), z.object({ outputEquals: z.string() })]).optional(),
});
const definitionReply = { name: z.string(), entry: z.string(), nodes: z.array(node), edges: z.array(edge), maxSteps: z.number().int().optional() };
const nextCursor = z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last one.' });
const version = z.number().int().min(1);

export const workflowSchema = z
  .object({ id: z.string(), version, ...definitionReply, createdAt: z.iso.datetime(), updatedAt: z.iso.datetime() })
  .meta({ id: 'Workflow', description: 'A workflow: its definition at its current version.' });

export const workflowPageSchema = z.object({ items: z.array(workflowSchema), nextCursor }).meta({ id: 'WorkflowPage' });

export const workflowVersionSchema = z
  .object({ workflowId: z.string(), version, definition: z.object(definitionReply), createdAt: z.iso.datetime() })
  .meta({ id: 'WorkflowVersion' });

export const workflowVersionPageSchema = z.object({ items: z.array(workflowVersionSchema), nextCursor }).meta({ id: 'WorkflowVersionPage' });

const usage = z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), totalTokens: z.number().int() }).passthrough();

export const workflowRunReplySchema = z
  .object({
    runId: z.uuid().meta({ description: "The workflow's run: `GET /v1/runs/{runId}` lists its steps as `children`." }),
    workflowId: z.string(),
    version,
    status: z.enum(['completed', 'failed', 'cancelled', 'requires_approval', 'requires_action']),
    output: z.string().nullable().meta({ description: "The last step's output." }),
    path: z.array(z.string()).meta({ description: 'The nodes run, in order (a node run twice is listed twice).' }),
    steps: z.array(z.object({ node: z.string(), runId: z.uuid(), output: z.string() })),
    stopReason: z.enum(['completed', 'max_steps', 'step_failed', 'cancelled', 'paused']),
    usage,
    costUsd: z.number().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    approvals: z
      .array(z.object({ toolCallId: z.string(), name: z.string(), arguments: z.unknown(), runId: z.uuid().optional() }))
      .optional()
      .meta({
        description: "A step waits for approval: its calls, with the step's `runId`; decide them with `POST /v1/runs/{runId}/approvals` of the workflow's run.",
      }),
    requiredAction: z
      .object({
        type: z.literal('submit_tool_outputs'),
        toolCalls: z.array(
          z.object({
            id: z.string(),
            type: z.literal('function'),
            function: z.object({ name: z.string(), arguments: z.string() }),
            runId: z.uuid().optional(),
          }),
        ),
      })
      .optional()
      .meta({ description: "A step waits for client tools: answer them with `POST /v1/runs/{runId}/tool-outputs` of the workflow's run." }),
    expiresAt: z.iso.datetime().optional().meta({ description: 'A paused run expires unanswered past this time.' }),
  })
  .meta({ id: 'WorkflowRunReply' });
