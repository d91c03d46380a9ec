import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { parseSse } from '../support/parse-sse.js';
import { call } from './http-test-context.js';
import { scriptedAgentApp } from './support/scripted-agent-app.js';

/** A local model that writes its tool calls as text (no tool parser on its server): the chat runs them as native calls. */
const LOCATION_TOOL = {
  type: 'function',
  function: { name: 'get_location', description: "The user's location", parameters: { type: 'object', properties: {} } },
} as const;

const STYLES: [string, string][] = [
  ['Hermes', '<tool_call>\n{"name": "save_memory", "arguments": {"key": "tea", "content": "Alice drinks green tea"}}\n</tool_call>'],
  ['Mistral', '[TOOL_CALLS][{"name": "save_memory", "arguments": {"key": "tea", "content": "Alice drinks green tea"}}]'],
  ['Llama', '<function=save_memory>{"key": "tea", "content": "Alice drinks green tea"}</function>'],
  ['fenced JSON', '```json\n{"name": "save_memory", "arguments": {"key": "tea", "content": "Alice drinks green tea"}}\n```'],
];

describeOnDrivers('tool calls written as text, through /v1/chat', (driver) => {
  const { ctx, appWithLlm } = scriptedAgentApp(driver);
  const memory = () => ctx().memories.forTenant('default').get('tea', { agentId: 'default' });

  it.each(STYLES)('runs a %s call like a native one; the stored turn has the call, not its text', async (_style, text) => {
    const { app, llm } = await appWithLlm([reply.text(text), reply.text('Saved.')]);
    const res = await call(app, 'POST', '/v1/chat', { message: 'Remember that I drink green tea' });
    expect(res.body).toMatchObject({ status: 'completed', answer: 'Saved.', toolCalls: [{ name: 'save_memory', isError: false }] });
    expect((await memory())?.content).toBe('Alice drinks green tea');
    const id = res.body.toolCalls[0].id as string;
    expect(id).toMatch(/^call_/);
    expect(llm.requests[1]!.body.messages.find((m) => m.role === 'assistant')).toMatchObject({ tool_calls: [{ id, function: { name: 'save_memory' } }] });

    const stored = await call(app, 'GET', `/v1/conversations/${res.body.conversationId}`);
    const asked = stored.body.messages.find((m: { role: string }) => m.role === 'assistant');
    expect(asked.toolCalls).toMatchObject([{ id, name: 'save_memory' }]);
    expect(asked.content ?? '').toBe('');
    expect(JSON.stringify(stored.body)).not.toContain('<tool_call>');
  });

  it.each([
    ['bad JSON', '<tool_call>{"name": "save_memory", "arguments": {"content": }</tool_call>'],
    ['a tool not offered', '<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>'],
    ['text around the call', 'Sure. <function=save_memory>{"content": "Alice drinks green tea"}</function>'],
  ])('leaves %s as the answer', async (_case, text) => {
    const { app, llm } = await appWithLlm([reply.text(text)]);
    const res = await call(app, 'POST', '/v1/chat', { message: 'Remember that I drink green tea' });
    expect(res.body).toMatchObject({ status: 'completed', answer: text, toolCalls: [] });
    expect(llm.requests).toHaveLength(1);
  });

  it('leaves calls as text for an agent whose textFallback is off', async () => {
    const text = STYLES[0]![1];
    const { app } = await appWithLlm([reply.text(text)]);
    expect((await call(app, 'POST', '/v1/agents', { id: 'strict', name: 'Strict', toolCalls: { textFallback: 'off' } })).status).toBe(201);
    const res = await call(app, 'POST', '/v1/chat', { message: 'Remember that I drink green tea', agentId: 'strict' });
    expect(res.body).toMatchObject({ status: 'completed', answer: text, toolCalls: [] });
    expect(await ctx().memories.forTenant('default').get('tea', { agentId: 'strict' })).toBeNull();
  });

  it('pauses an approval-gated tool written as text for a person, then runs it once approved', async () => {
    await ctx().memories.forTenant('default').save({ key: 'old', content: 'An old fact', agentId: 'careful' });
    const { app } = await appWithLlm([reply.text('<function=delete_memory>{"key": "old"}</function>'), reply.text('Forgotten.')]);
    await call(app, 'POST', '/v1/agents', { id: 'careful', name: 'Careful' });
    const paused = await call(app, 'POST', '/v1/chat', { message: 'Forget the old fact', agentId: 'careful' });
    expect(paused.body).toMatchObject({ status: 'requires_approval', approvals: [{ name: 'delete_memory', arguments: { key: 'old' } }] });
    expect(await ctx().memories.forTenant('default').get('old', { agentId: 'careful' })).not.toBeNull();
    const toolCallId = paused.body.approvals[0].toolCallId as string;
    const done = await call(app, 'POST', `/v1/runs/${paused.body.runId}/approvals`, { decisions: [{ toolCallId, approve: true }] });
    expect(done.body).toMatchObject({ status: 'completed', answer: 'Forgotten.' });
    expect(await ctx().memories.forTenant('default').get('old', { agentId: 'careful' })).toBeNull();
  });

  it('pauses a client tool written as text for the client, and resumes with its output', async () => {
    const { app, llm } = await appWithLlm([reply.text('[TOOL_CALLS][{"name": "get_location", "arguments": {}}]'), reply.text('You are in Oslo.')]);
    const paused = await call(app, 'POST', '/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL] });
    expect(paused.body).toMatchObject({ status: 'requires_action', requiredAction: { toolCalls: [{ function: { name: 'get_location', arguments: '{}' } }] } });
    const toolCallId = paused.body.requiredAction.toolCalls[0].id as string;
    const done = await call(app, 'POST', `/v1/runs/${paused.body.runId}/tool-outputs`, { toolOutputs: [{ toolCallId, output: '{"city":"Oslo"}' }] });
    expect(done.body).toMatchObject({ status: 'completed', answer: 'You are in Oslo.' });
    expect(llm.requests[1]!.body.messages.find((m) => m.role === 'tool')).toMatchObject({ tool_call_id: toolCallId, content: '{"city":"Oslo"}' });
  });

  it('streams no delta of the calls written as text, only the answer', async () => {
    const { app } = await appWithLlm([reply.text(STYLES[0]![1], { chunkSize: 5 }), reply.text('Saved it.', { chunkSize: 3 })]);
    const res = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Remember that I drink green tea', stream: true }),
    });
    const events = parseSse(await res.text());
    const deltas = events.filter((e) => e.event === 'delta').map((e) => e.data.text as string);
    expect(deltas.join('')).toBe('Saved it.');
    expect(events.map((e) => e.event)).toContain('tool_end');
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { answer: 'Saved it.' } });
  });

  it('runs a call written as text through /v1/chat/completions too', async () => {
    const { app } = await appWithLlm([reply.text(STYLES[2]![1]), reply.text('Saved.')]);
    const res = await call(app, 'POST', '/v1/chat/completions', { model: 'memrag', messages: [{ role: 'user', content: 'Remember that I drink green tea' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.choices[0].message.content).toBe('Saved.');
    expect((await memory())?.content).toBe('Alice drinks green tea');
  });

  it('streams only the answer to the official openai client on a listening server', async () => {
    const { app } = await appWithLlm([reply.text(STYLES[1]![1], { chunkSize: 4 }), reply.text('Saved it.', { chunkSize: 2 })]);
    let listening!: ServerType;
    const base = await new Promise<string>((resolve) => {
      listening = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
    try {
      const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: 'memrag',
        stream: true,
        messages: [{ role: 'user', content: 'Remember that I drink green tea' }],
      });
      let content = '';
      for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
      expect(content).toBe('Saved it.');
      expect((await memory())?.content).toBe('Alice drinks green tea');
    } finally {
      await new Promise<void>((resolve) => listening.close(() => resolve()));
    }
  });
});
