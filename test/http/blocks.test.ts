import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { reply } from '../../testkit/scripted-llm-server.js';
import { queryRows } from '../../src/db/query-rows.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call } from './http-test-context.js';
import { scriptedAgentApp } from './support/scripted-agent-app.js';

/** Working memory over HTTP: the routes, their refusals, history and reads as of a moment. */
describeOnDrivers('working-memory blocks over HTTP', (driver) => {
  const { ctx, app, appWithLlm } = scriptedAgentApp(driver, {
    env: { MEMORY_FIREWALL_SECOND_OPINION: 'off' },
    clear: { also: ['blocks', 'block_history'] },
  });
  const agent = async (id: string, settings: Record<string, unknown> = {}) => {
    const res = await call(app(), 'POST', '/v1/agents', { id, name: id, ...settings });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };
  const put = (label: string, body: Record<string, unknown>) => call(app(), 'PUT', `/v1/blocks/${label}`, body);

  it('creates, replaces, lists, reads as of a moment, deletes, and keeps every value in the history', async () => {
    await agent('a1');
    const created = await put('human', { agentId: 'a1', userId: 'u1', value: 'Name: Ada', description: 'who the user is' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.block).toMatchObject({ agentId: 'a1', userId: 'u1', label: 'human', value: 'Name: Ada', limit: 2000, readOnly: false, schema: null });
    const between = new Date();
    await new Promise((r) => setTimeout(r, 20));
    const replaced = await put('human', { agentId: 'a1', userId: 'u1', value: 'Name: Ada Lovelace', limit: 500 });
    expect(replaced.status).toBe(200);
    expect(replaced.body.block).toMatchObject({ value: 'Name: Ada Lovelace', limit: 500, description: null });

    const now = await call(app(), 'GET', '/v1/blocks/human?agentId=a1&userId=u1');
    expect(now.body.block.value).toBe('Name: Ada Lovelace');
    const then = await call(app(), 'GET', `/v1/blocks/human?agentId=a1&userId=u1&asOf=${between.toISOString()}`);
    expect(then.body.block).toMatchObject({ value: 'Name: Ada', limit: 2000, description: 'who the user is' });
    // Another scope is another block.
    expect((await call(app(), 'GET', '/v1/blocks/human?userId=u1')).status).toBe(404);
    expect((await call(app(), 'GET', '/v1/blocks?agentId=a1&userId=u1')).body.blocks.map((b: { label: string }) => b.label)).toEqual(['human']);

    expect((await call(app(), 'DELETE', '/v1/blocks/human?agentId=a1&userId=u1')).status).toBe(204);
    expect((await call(app(), 'GET', '/v1/blocks/human?agentId=a1&userId=u1')).status).toBe(404);
    expect((await call(app(), 'DELETE', '/v1/blocks/human?agentId=a1&userId=u1')).status).toBe(404);
    const history = await call(app(), 'GET', '/v1/blocks/human/history?agentId=a1&userId=u1');
    expect(history.body.events.map((e: { event: string; value: string | null; actor: { type: string } }) => [e.event, e.value, e.actor.type])).toEqual([
      ['written', 'Name: Ada', 'api'],
      ['written', 'Name: Ada Lovelace', 'api'],
      ['deleted', null, 'api'],
    ]);
    // Still readable as it was before the delete.
    expect((await call(app(), 'GET', `/v1/blocks/human?agentId=a1&userId=u1&asOf=${between.toISOString()}`)).body.block.value).toBe('Name: Ada');
  });

  it('pages the history from the newest event back instead of returning the oldest events only', async () => {
    for (let i = 0; i < 7; i++) expect((await put('diary', { userId: 'u1', value: `v${i}` })).status).toBeLessThan(300);
    const values = (page: { body: { events: Array<{ value: string }> } }) => page.body.events.map((e) => e.value);
    const newest = await call(app(), 'GET', '/v1/blocks/diary/history?userId=u1&limit=3');
    expect(values(newest)).toEqual(['v4', 'v5', 'v6']);
    const older = await call(app(), 'GET', `/v1/blocks/diary/history?userId=u1&limit=3&before=${newest.body.nextBefore}`);
    expect(values(older)).toEqual(['v1', 'v2', 'v3']);
    const oldest = await call(app(), 'GET', `/v1/blocks/diary/history?userId=u1&limit=3&before=${older.body.nextBefore}`);
    expect([values(oldest), oldest.body.nextBefore]).toEqual([['v0'], null]);
    const bad = await call(app(), 'GET', '/v1/blocks/diary/history?userId=u1&limit=1001');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('"path":"limit"');
  });

  it('refuses bad input with a 4xx naming the field, and writes nothing', async () => {
    await agent('a1');
    const refused = async (label: string, body: Record<string, unknown>, field: string, status = 400) => {
      const res = await put(label, { userId: 'u1', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(JSON.stringify(res.body.error.details ?? [])).toContain(`"path":"${field}"`);
    };
    await refused('Bad Label', { value: 'x' }, 'label');
    await refused('x'.repeat(65), { value: 'x' }, 'label');
    await refused('ok', { value: 'x', limit: 0 }, 'limit');
    await refused('ok', { value: 'x', limit: 20_001 }, 'limit');
    await refused('ok', { value: 'x'.repeat(11), limit: 10 }, 'value');
    await refused('ok', { value: '{}', schema: { type: 'nonsense' } }, 'schema');
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    await refused('ok', { value: '{"name": 3}', schema }, 'value.name');
    await refused('ok', { value: '{}', schema }, 'value.name');
    await refused('ok', { value: 'not json', schema }, 'value');
    await refused('ok', { agentId: 'no-such-agent', value: 'x' }, 'agentId', 404);
    // A block of no agent and no user would be in no turn.
    await refused('ok', { userId: undefined, value: 'x' }, 'agentId');
    expect(await queryRows(ctx().database.db, sql`SELECT count(*)::int AS n FROM blocks`)).toEqual([{ n: 0 }]);
    expect(await queryRows(ctx().database.db, sql`SELECT count(*)::int AS n FROM block_history`)).toEqual([{ n: 0 }]);
  });

  it("puts the turn's blocks in the system prompt after the agent's instructions, in scope order, with their use of the limit", async () => {
    const { app: chatApp, llm } = await appWithLlm([reply.text('Hello Ada.')]);
    await agent('a1', { instructions: 'Be warm.' });
    await put('persona', { agentId: 'a1', value: 'I am a librarian.' });
    await put('prefs', { userId: 'u1', value: 'Likes tea.', description: 'standing preferences' });
    await put('notes', { agentId: 'a1', userId: 'u1', value: 'Asked about Babbage.', limit: 100 });
    // Not the turn's: another user's and another agent's.
    await put('prefs', { userId: 'u2', value: 'Likes coffee.' });
    await agent('a2');
    await put('persona', { agentId: 'a2', value: 'I am a pirate.' });
    const res = await call(chatApp, 'POST', '/v1/chat', { message: 'Hi', agentId: 'a1', userId: 'u1' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const system = String(llm.requests[0]!.body.messages[0]!.content);
    const at = (text: string) => system.indexOf(text);
    expect(at('</agent_instructions>')).toBeGreaterThan(0);
    expect(at('<working_memory>')).toBeGreaterThan(at('</agent_instructions>'));
    expect(at('I am a librarian.')).toBeGreaterThan(at('<working_memory>'));
    expect(at('Likes tea.')).toBeGreaterThan(at('I am a librarian.'));
    expect(at('Asked about Babbage.')).toBeGreaterThan(at('Likes tea.'));
    expect(system).toContain('label="notes"');
    expect(system).toContain('chars="20/100"');
    expect(system).toContain('description="standing preferences"');
    expect(system).not.toContain('coffee');
    expect(system).not.toContain('pirate');
    const tools = (llm.requests[0]!.body.tools ?? []).map((t) => t.function.name);
    expect(tools).toEqual(expect.arrayContaining(['block_append', 'block_replace', 'block_rewrite']));
    // No schema'd block: no JSON patch tool.
    expect(tools).not.toContain('block_update_json');
  });

  it('offers no block tools to a turn without blocks, and none the agent denies', async () => {
    const { app: chatApp, llm } = await appWithLlm([reply.text('a'), reply.text('b')]);
    await call(chatApp, 'POST', '/v1/chat', { message: 'Hi', agentId: 'a0', userId: 'u1' });
    expect((llm.requests[0]!.body.tools ?? []).map((t) => t.function.name).filter((n) => n.startsWith('block_'))).toEqual([]);
    expect(String(llm.requests[0]!.body.messages[0]!.content)).not.toContain('working_memory');
    await agent('a1', { tools: { deny: ['block_rewrite'] } });
    await put('persona', { agentId: 'a1', value: 'x' });
    await call(chatApp, 'POST', '/v1/chat', { message: 'Hi', agentId: 'a1', userId: 'u1' });
    const names = (llm.requests[1]!.body.tools ?? []).map((t) => t.function.name);
    expect(names).toContain('block_append');
    expect(names).not.toContain('block_rewrite');
    expect(String(llm.requests[1]!.body.messages[0]!.content)).not.toContain('block_rewrite');
  });
});
