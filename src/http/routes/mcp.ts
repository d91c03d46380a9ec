import { Hono } from 'hono';
import type { AppContext } from '../../app-context.js';
import type { ApiEnv } from '../api-env.js';
import { actorOf } from '../audit-record.js';
import { refuseMcpCallsWithoutScope } from '../mcp-tool-scopes.js';
import { tenantOf } from '../tenant-context.js';

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless. Each POST gets a server and
 * transport of its own, bound to the request's tenant, and a JSON reply: no session lives in this
 * process, so any instance behind a load balancer can answer any request, and nothing needs
 * cleaning up when a client vanishes. Not part of the OpenAPI document: it is one JSON-RPC
 * endpoint, described by MCP's `tools/list` instead.
 *
 * The MCP SDK and the tools are loaded by the first request: a server that never serves /mcp does
 * not hold them (~7 MB of heap, ~20 MB resident).
 */
export function createMcpRoutes(ctx: AppContext): Hono<ApiEnv> {
  const routes = new Hono<ApiEnv>();

  routes.post('/', async (c) => {
    // Read here rather than by the transport, so that the app's body limit answers an oversized
    // body with its usual 413 (the transport would make it a JSON-RPC parse error).
    const text = await c.req.text();
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(text);
    } catch {
      return c.json(jsonRpcError(-32700, 'Parse error: the body is not JSON'), 400);
    }
    // Each tool needs the scope of the route it stands for, as that route does over /v1.
    const refused = refuseMcpCallsWithoutScope(c, parsedBody);
    if (refused) return refused;
    const { createMcpServer, WebStandardStreamableHTTPServerTransport } = await loadMcp();
    const server = createMcpServer(ctx, { tenantId: tenantOf(c), signal: c.req.raw.signal, actor: actorOf(c) });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      // In JSON mode this resolves once every response of the message (or batch) is in the reply.
      return await transport.handleRequest(c.req.raw, { parsedBody });
    } finally {
      await server.close();
    }
  });

  // GET would open a stream for server-initiated messages and DELETE would end a session: a
  // stateless server has neither, and MCP clients take 405 to mean exactly that.
  routes.on(['GET', 'DELETE'], '/', (c) => {
    c.header('Allow', 'POST');
    return c.json(jsonRpcError(-32000, `Method not allowed: this server is stateless; send JSON-RPC messages with POST`), 405);
  });

  return routes;
}

let mcpModules: Promise<typeof import('../../mcp/mcp-server.js') & typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')> | undefined;

function loadMcp() {
  mcpModules ??= Promise.all([import('../../mcp/mcp-server.js'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]).then(
    ([server, transport]) => ({ ...server, ...transport }),
  );
  return mcpModules;
}

function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0' as const, error: { code, message }, id: null };
}
