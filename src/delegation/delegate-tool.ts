import { z } from 'zod';
import { type Tool, defineTool } from '../llm/tool.js';
import type { CastRoles } from './cast-roles.js';

export const DELEGATE_TOOL_NAME = 'delegate';

/** A task the model hands over: long enough for a brief with its context, not a document. */
const TASK_MAX_CHARS = 20_000;

export const delegateArgs = z.strictObject({
  role: z.string().trim().min(1).max(64).describe('one of the roles below'),
  task: z
    .string()
    .trim()
    .min(1)
    .max(TASK_MAX_CHARS)
    .describe('what the role should do, with everything it needs to know: it sees nothing else of this conversation'),
});

export type DelegateArgs = z.output<typeof delegateArgs>;

/** What the lead is told of `delegate`: its visible roles, each with what it is for. */
export function delegateDescription(roles: CastRoles): string {
  const listing = roles.listing();
  return (
    'Hand a task to another agent and get back its answer. It works alone, with its own instructions and tools, and sees only the task: say everything it needs. Several calls in one reply run at once.' +
    (listing ? `\nRoles:\n${listing}` : '\nThe roles are the ones your instructions name.')
  );
}

/** The `delegate` tool over `run`, which starts the child run and answers with its reply. */
export function createDelegateTool(
  roles: CastRoles,
  run: (args: DelegateArgs, toolCallId: string, signal: AbortSignal) => Promise<string>,
): Tool<typeof delegateArgs> {
  return defineTool({
    name: DELEGATE_TOOL_NAME,
    description: delegateDescription(roles),
    parameters: delegateArgs,
    execute: (args, ctx) => run(args, ctx.toolCallId, ctx.signal),
  });
}
