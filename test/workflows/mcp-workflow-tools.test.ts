import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { call, createApp, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: any }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const [first] = result.content;
  if (first?.type !== 'text') throw new Error(`${name}: expected text content`);
  let body: unknown = first.text;
  try {
    body = JSON.parse(first.text);
  } catch {
    // The SDK's own argument validation answers plain text.
  }
  return { isError: result.isError === true, body };
}

describe('workflows over MCP', () => {
  let ctx: AppContext;
  let server: ListeningServer;
  let client: Client;

  beforeAll(async () => {
    ctx = await createTestContext();
    server = await listen(createApp(ctx));
    client = new Client({ name: 'memrag-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await ctx?.close();
  });

  it('lists workflows and runs one, a 404 for an unknown one', async () => {
    const app = createApp(ctx);
    const flow = { id: 'mcp-flow', name: 'One step', entry: 'only', nodes: [{ id: 'only', agentId: 'desk', prompt: 'Tell me about {{input}}' }] };
    expect((await call(app, 'POST', '/v1/workflows', flow)).status).toBe(201);
    const listed = await callTool(client, 'list_workflows', {});
    expect(listed).toMatchObject({ isError: false, body: { items: [{ id: 'mcp-flow', version: 1 }] } });
    // No LLM here: the step's answer is extractive, and the run completes at its only node.
    const ran = await callTool(client, 'run_workflow', { id: 'mcp-flow', input: 'tea' });
    expect(ran).toMatchObject({ isError: false, body: { status: 'completed', path: ['only'], stopReason: 'completed' } });
    expect(typeof ran.body.output).toBe('string');
    const missing = await callTool(client, 'run_workflow', { id: 'nope', input: 'tea' });
    expect(missing).toMatchObject({ isError: true, body: { error: { code: 'not_found' } } });
  });
});
