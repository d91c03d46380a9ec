import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { HttpError, notFound, validationError } from '../api/errors.js';
import { blockHistoryQuery, blockScopeQuery, getBlockQuery, putBlockBody } from '../api/schemas/block-schemas.js';
import type { AgentStore } from '../agents/agent-store.js';
import { blockLabelSchema } from '../blocks/block-fields.js';
import { type BlockActor, BlockNotFoundError, type BlockStore, BlockWriteError } from '../blocks/block-types.js';

type Answer = (tool: string, work: () => Promise<unknown>) => Promise<CallToolResult>;

const scopeOf = (q: { agentId?: string | undefined; userId?: string | undefined }) => ({ agentId: q.agentId ?? null, userId: q.userId ?? null });

const withLabel = <S extends z.ZodRawShape>(shape: S) => z.strictObject({ label: blockLabelSchema, ...shape });

// The API's writer: MCP is the API's other edge, and its writes are recorded as PUT /v1/blocks's are.
const API_ACTOR: BlockActor = { type: 'api' };

/** A refused write as the route says it: a 400 naming the field, and nothing written. */
async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BlockWriteError) throw validationError([{ path: error.field, message: error.message }], 'arguments');
    if (error instanceof BlockNotFoundError) throw notFound(error.message);
    throw error;
  }
}

const SCOPES =
  "`agentId` alone is the agent's block (seen by all its users), `userId` alone the user's (seen by every agent), both that agent's own view of the user.";

/**
 * Working memory's MCP tools, over `/v1/blocks` with the routes' input schemas: an MCP client's
 * model reads and keeps blocks as the API does (its writes are the API's: no `readOnly` binds them).
 */
export function registerBlockTools(server: McpServer, blocks: BlockStore, agents: Pick<AgentStore, 'get'>, answer: Answer): void {
  server.registerTool(
    'list_blocks',
    {
      title: 'List working-memory blocks',
      description: `The working-memory blocks of one scope, by label: ${SCOPES} Answers \`{"blocks":[{label,value,limit,...}]}\`.`,
      inputSchema: blockScopeQuery,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (query) => answer('list_blocks', async () => ({ blocks: await blocks.list(scopeOf(query)) })),
  );

  server.registerTool(
    'get_block',
    {
      title: 'Read a working-memory block',
      description: 'One block of a scope (see list_blocks) by `label`, as `{"block":{...}}`; `asOf`: as it was then.',
      inputSchema: withLabel(getBlockQuery.shape),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ label, asOf, ...scope }) =>
      answer('get_block', async () => {
        const block = await blocks.get(label, scopeOf(scope), asOf === undefined ? undefined : new Date(asOf));
        if (!block) throw notFound(`No block '${label}' in this scope${asOf ? ' at that moment' : ''}`);
        return { block };
      }),
  );

  server.registerTool(
    'put_block',
    {
      title: 'Create or replace a working-memory block',
      description:
        `Create the block \`label\` of a scope, or replace it whole (fields left out take their defaults: limit 2000, not read-only, no schema). ${SCOPES} ` +
        'One of the two is required, and `agentId` must name an agent. A value over its `limit`, or not satisfying its `schema` (a JSON Schema), is an error naming the field. ' +
        'Answers `{"block":{...},"created":true|false}`.',
      inputSchema: withLabel(putBlockBody.shape),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ label, agentId, userId, ...input }) =>
      answer('put_block', async () => {
        // A block of neither would be in no turn's prompt.
        if (agentId === undefined && userId === undefined)
          throw validationError([{ path: 'agentId', message: 'agentId or userId (or both) is required' }], 'arguments');
        // The tenant's wall: a block is written for one of its own agents only.
        if (agentId !== undefined && !(await agents.get(agentId))) {
          throw new HttpError(404, 'not_found', `agentId: no agent with id ${JSON.stringify(agentId)}`, [{ path: 'agentId', message: 'names no agent' }]);
        }
        return refusing(() => blocks.put(label, scopeOf({ agentId, userId }), input, API_ACTOR));
      }),
  );

  server.registerTool(
    'delete_block',
    {
      title: 'Delete a working-memory block',
      description: `Delete the block \`label\` of a scope (see list_blocks); its history stays. Answers \`{"deleted":true}\`; a block the scope does not hold is an error.`,
      inputSchema: withLabel(blockScopeQuery.shape),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ label, ...scope }) =>
      answer('delete_block', async () => {
        if (!(await blocks.delete(label, scopeOf(scope), API_ACTOR))) throw notFound(`No block '${label}' in this scope`);
        return { deleted: true };
      }),
  );

  server.registerTool(
    'block_history',
    {
      title: "A working-memory block's history",
      description:
        'Every value the block `label` of a scope (see list_blocks) has held, with who wrote it (`actor`: the API, the model in a run with its tool, ' +
        'a template, an import) and when; kept after a delete. The newest `limit` events (older than `before`), oldest first: ' +
        '`{"events":[{id,event,value,status,actor,at,...}],"nextBefore"}`; pass `nextBefore` as `before` for the page before.',
      inputSchema: withLabel(blockHistoryQuery.shape),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ label, limit, before, ...scope }) => answer('block_history', () => blocks.history(label, scopeOf(scope), { limit, before })),
  );
}
