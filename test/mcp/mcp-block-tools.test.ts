import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';

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

describeOnDrivers('working memory over MCP', (driver) => {
  let ctx: AppContext;
  let server: ListeningServer;
  let client: Client;
  let release: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    ctx = await createTestContext(opened.env);
    server = await listen(createApp(ctx));
    client = new Client({ name: 'memrag-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await ctx?.close();
    await release?.();
  });
  beforeEach(async () => {
    for (const table of ['blocks', 'block_history', 'agents', 'agent_versions']) await ctx.database.db.execute(sql.raw(`DELETE FROM ${table}`));
  });

  it('lists a scope’s blocks and reads one, now and as of a moment', async () => {
    const store = ctx.blocks.forTenant('default');
    await store.put('prefs', { agentId: null, userId: 'ada' }, { value: 'Likes tea.' }, { type: 'api' });
    const before = new Date();
    await new Promise((r) => setTimeout(r, 10));
    await store.put('prefs', { agentId: null, userId: 'ada' }, { value: 'Likes coffee.' }, { type: 'api' });
    const listed = await callTool(client, 'list_blocks', { userId: 'ada' });
    expect(listed).toMatchObject({ isError: false, body: { blocks: [{ label: 'prefs', value: 'Likes coffee.', userId: 'ada', agentId: null }] } });
    expect((await callTool(client, 'get_block', { label: 'prefs', userId: 'ada' })).body.block.value).toBe('Likes coffee.');
    expect((await callTool(client, 'get_block', { label: 'prefs', userId: 'ada', asOf: before.toISOString() })).body.block.value).toBe('Likes tea.');
    const missing = await callTool(client, 'get_block', { label: 'prefs', userId: 'bob' });
    expect(missing).toMatchObject({ isError: true, body: { error: { code: 'not_found' } } });
    expect((await callTool(client, 'get_block', { label: 'Bad Label', userId: 'ada' })).isError).toBe(true);
  });

  it('creates and replaces a block with put_block, recorded as an API write in block_history', async () => {
    await ctx.agents.forTenant('default').create('helper', { name: 'helper' });
    const created = await callTool(client, 'put_block', {
      label: 'human',
      agentId: 'helper',
      userId: 'ada',
      value: 'Name: Ada',
      description: 'who the user is',
    });
    expect(created).toMatchObject({
      isError: false,
      body: { created: true, block: { label: 'human', agentId: 'helper', userId: 'ada', value: 'Name: Ada', limit: 2000 } },
    });
    const replaced = await callTool(client, 'put_block', {
      label: 'human',
      agentId: 'helper',
      userId: 'ada',
      value: '{"name":"Ada"}',
      limit: 100,
      readOnly: true,
      schema: { type: 'object', properties: { name: { type: 'string' } } },
    });
    expect(replaced.body).toMatchObject({ created: false, block: { value: '{"name":"Ada"}', limit: 100, readOnly: true, description: null } });
    // The same store the route reads: the block is in the prompt's blocks of the agent's turn with Ada.
    expect((await ctx.blocks.forTenant('default').visible('helper', 'ada')).map((b) => b.value)).toEqual(['{"name":"Ada"}']);

    const history = await callTool(client, 'block_history', { label: 'human', agentId: 'helper', userId: 'ada' });
    expect(history.isError).toBe(false);
    expect(history.body.events.map((e: any) => [e.event, e.value, e.actor])).toEqual([
      ['written', 'Name: Ada', { type: 'api' }],
      ['written', '{"name":"Ada"}', { type: 'api' }],
    ]);
    // A page at a time: the newest event, then the one before it.
    const newest = await callTool(client, 'block_history', { label: 'human', agentId: 'helper', userId: 'ada', limit: 1 });
    expect(newest.body.events.map((e: any) => e.value)).toEqual(['{"name":"Ada"}']);
    const older = await callTool(client, 'block_history', { label: 'human', agentId: 'helper', userId: 'ada', limit: 1, before: newest.body.nextBefore });
    expect(older.body).toMatchObject({ events: [{ value: 'Name: Ada' }], nextBefore: null });
  });

  it('refuses a write the route refuses, naming the field, and writes nothing', async () => {
    const refused = async (args: Record<string, unknown>, code: string, field: string) => {
      const result = await callTool(client, 'put_block', args);
      expect(result, JSON.stringify(args)).toMatchObject({ isError: true, body: { error: { code, details: [expect.objectContaining({ path: field })] } } });
    };
    await refused({ label: 'notes', value: 'no scope' }, 'validation_error', 'agentId');
    await refused({ label: 'notes', userId: 'ada', value: 'x'.repeat(11), limit: 10 }, 'validation_error', 'value');
    await refused({ label: 'notes', userId: 'ada', value: '{}', schema: { type: 'no-such-type' } }, 'validation_error', 'schema');
    await refused(
      { label: 'notes', userId: 'ada', value: '{"age":"old"}', schema: { type: 'object', properties: { age: { type: 'number' } } } },
      'validation_error',
      'value.age',
    );
    // Another tenant's agent is no agent of this one.
    await ctx.agents.forTenant('elsewhere').create('theirs', { name: 'theirs' });
    await refused({ label: 'notes', agentId: 'theirs', value: 'hello' }, 'not_found', 'agentId');
    // The route's own schema refuses a bad label or limit before the tool runs.
    expect((await callTool(client, 'put_block', { label: 'Not OK', userId: 'ada', value: 'x' })).isError).toBe(true);
    expect((await callTool(client, 'put_block', { label: 'notes', userId: 'ada', value: 'x', limit: 20_001 })).isError).toBe(true);
    expect((await callTool(client, 'list_blocks', { userId: 'ada' })).body.blocks).toEqual([]);
    expect((await callTool(client, 'block_history', { label: 'notes', userId: 'ada' })).body.events).toEqual([]);
    expect((await callTool(client, 'block_history', { label: 'notes', userId: 'ada', limit: 1_001 })).isError).toBe(true);
  });

  it('deletes a block with delete_block; its history stays, and a missing block is an error', async () => {
    expect((await callTool(client, 'put_block', { label: 'todo', userId: 'ada', value: 'Buy milk.' })).body.created).toBe(true);
    expect(await callTool(client, 'delete_block', { label: 'todo', userId: 'ada' })).toEqual({ isError: false, body: { deleted: true } });
    expect(await ctx.blocks.forTenant('default').get('todo', { agentId: null, userId: 'ada' })).toBeNull();
    expect(await callTool(client, 'delete_block', { label: 'todo', userId: 'ada' })).toMatchObject({ isError: true, body: { error: { code: 'not_found' } } });
    const history = await callTool(client, 'block_history', { label: 'todo', userId: 'ada' });
    expect(history.body.events.map((e: any) => [e.event, e.actor.type])).toEqual([
      ['written', 'api'],
      ['deleted', 'api'],
    ]);
  });
});
