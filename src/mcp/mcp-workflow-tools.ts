import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { notFound } from '../api/errors.js';
import { listWorkflowsQuery, runWorkflowBody } from '../api/schemas/workflow-schemas.js';
import type { ChatEvent } from '../chat/chat-service.js';
import { createPgWorkflowStore } from '../workflows/pg-workflow-store.js';
import { workflowRunsOver } from '../workflows/workflow-runs.js';

type Answer = (tool: string, work: () => Promise<unknown>, bounded?: boolean) => Promise<CallToolResult>;

/** Workflows' MCP tools, over `GET /v1/workflows` and `POST /v1/workflows/{id}/runs` with their input schemas. */
export function registerWorkflowTools(server: McpServer, ctx: AppContext, tenantId: string, signal: AbortSignal | undefined, answer: Answer): void {
  const store = createPgWorkflowStore({ db: ctx.database.db, tenantId });

  server.registerTool(
    'list_workflows',
    {
      title: 'List workflows',
      description: 'The workflows of this tenant, newest first: `{"items":[{id,version,name,entry,nodes,edges,...}],"nextCursor"}`.',
      inputSchema: listWorkflowsQuery,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ limit, cursor }) => answer('list_workflows', () => store.list({ limit, ...(cursor !== undefined ? { cursor } : {}) })),
  );

  server.registerTool(
    'run_workflow',
    {
      title: 'Run a workflow',
      description:
        'Run the workflow `id` on `input`: each node a run of its agent, the edges chosen by its output. Answers ' +
        '`{"runId","status","output","path","steps":[{node,runId,output}],"stopReason","usage"}`.',
      inputSchema: runWorkflowBody.omit({ stream: true }).extend({ id: z.string().min(1).max(200) }),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    ({ id, input, userId }) =>
      answer(
        'run_workflow',
        async () => {
          const workflow = await store.get(id);
          if (!workflow) throw notFound(`No workflow with id ${JSON.stringify(id)}`);
          const runs = workflowRunsOver<ChatEvent>({
            tenantId,
            db: ctx.database.db,
            runs: ctx.runs.forTenant(tenantId),
            liveRuns: ctx.liveRuns,
            chat: ctx.chat.forTenant(tenantId),
            runTtlSeconds: ctx.config.RUN_TTL_SECONDS,
            eventOf: (event) => event,
          });
          return runs.start(workflow, { input, ...(userId !== undefined ? { userId } : {}), ...(signal ? { signal } : {}) });
        },
        // As `chat`: a run of models is bounded by its agents' own limits, not the request timeout.
        false,
      ),
  );
}
