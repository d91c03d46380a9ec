import type { Context } from 'hono';
import type { ApiEnv } from './api-env.js';
import { refuseWithoutScope } from './middleware/require-scope.js';
import { ROUTE_SCOPES, type RouteKey } from './route-scopes.js';

/**
 * Each MCP tool (src/mcp/mcp-server.ts) by the route whose operation it is: it needs that route's
 * scope. `test/http/route-scopes.test.ts` fails when a tool is missing here.
 */
export const MCP_TOOL_ROUTES: Record<string, RouteKey> = {
  search_memories: 'POST /v1/memories/search',
  save_memory: 'PUT /v1/memories/{key}',
  get_memory: 'GET /v1/memories/{key}',
  delete_memory: 'DELETE /v1/memories/{key}',
  list_tags: 'GET /v1/tags',
  search_knowledge: 'POST /v1/search',
  ingest_document: 'POST /v1/documents',
  chat: 'POST /v1/chat',
  list_blocks: 'GET /v1/blocks',
  get_block: 'GET /v1/blocks/{label}',
  put_block: 'PUT /v1/blocks/{label}',
  delete_block: 'DELETE /v1/blocks/{label}',
  block_history: 'GET /v1/blocks/{label}/history',
  list_workflows: 'GET /v1/workflows',
  run_workflow: 'POST /v1/workflows/{id}/runs',
};

/** The tools a JSON-RPC message (or batch) calls. */
function calledTools(message: unknown): string[] {
  const messages = Array.isArray(message) ? message : [message];
  return messages.flatMap((m) => {
    if (typeof m !== 'object' || m === null || (m as { method?: unknown }).method !== 'tools/call') return [];
    const name = (m as { params?: { name?: unknown } }).params?.name;
    return [typeof name === 'string' ? name : ''];
  });
}

/**
 * The 403 reply when the request's key lacks the scope of a tool the message calls, or undefined.
 * A tool missing from the map needs `admin`, as an undeclared route does: closed to the keys
 * that could not have used it, rather than open to all.
 */
export function refuseMcpCallsWithoutScope(c: Context<ApiEnv>, message: unknown): Response | undefined {
  for (const tool of calledTools(message)) {
    const route = Object.hasOwn(MCP_TOOL_ROUTES, tool) ? MCP_TOOL_ROUTES[tool] : undefined;
    const scope = route === undefined ? 'admin' : ROUTE_SCOPES[route];
    if (scope === 'public') continue;
    const refused = refuseWithoutScope(c, scope, `the MCP tool ${JSON.stringify(tool)}`);
    if (refused) return refused;
  }
  return undefined;
}
