import { describe, expect, it } from 'vitest';
import { type AgentEvent, type AgentTurnOptions, runAgentTurn } from '../../src/llm/agent-loop.js';
import type { AssistantMessage } from '../../src/llm/messages.js';
import { type Script, reply } from '../../testkit/scripted-llm-server.js';
import { scriptedTurn } from './support/scripted-turn.js';

/** A turn whose model writes its tool calls as text (a local model served without a tool parser). */
const { ran, start } = scriptedTurn({ name: 'get_location', description: "The user's location", parameters: { type: 'object', properties: {} } });

async function turn(script: Script, options: Partial<AgentTurnOptions> = {}) {
  const { server, base } = await start(script);
  const result = await runAgentTurn({ ...base, ...options });
  return { server, result };
}

const STYLES: [string, string][] = [
  ['Hermes', '<tool_call>\n{"name": "lookup", "arguments": {"word": "tea"}}\n</tool_call>'],
  ['Mistral', '[TOOL_CALLS][{"name": "lookup", "arguments": {"word": "tea"}}]'],
  ['Llama', '<function=lookup>{"word": "tea"}</function>'],
  ['fenced JSON', '```json\n{"name": "lookup", "arguments": {"word": "tea"}}\n```'],
];

describe('tool calls written as text', () => {
  it.each(STYLES)('runs a %s call as a native one, stored as calls without text', async (_style, text) => {
    const { server, result } = await turn([reply.text(text), reply.text('Tea is a drink.')]);
    expect(ran).toEqual(['lookup:tea']);
    expect(result).toMatchObject({ stopReason: 'completed', text: 'Tea is a drink.' });
    const asked = result.newMessages[0] as AssistantMessage;
    expect(asked).toMatchObject({ role: 'assistant', content: null, toolCalls: [{ name: 'lookup', arguments: '{"word":"tea"}' }] });
    expect(asked.toolCalls[0]!.id).toMatch(/^call_[0-9a-f]{24}$/);
    // The model's next request carries the call as a native one, answered by its result.
    const sent = server.requests[1]!.body.messages;
    expect(sent.find((m) => m.role === 'assistant')).toMatchObject({ tool_calls: [{ id: asked.toolCalls[0]!.id, function: { name: 'lookup' } }] });
    expect(sent.find((m) => m.role === 'tool')).toMatchObject({ tool_call_id: asked.toolCalls[0]!.id, content: 'meaning of tea' });
  });

  it('runs several calls of one reply, each with an id of its own', async () => {
    const text = '<tool_call>{"name":"lookup","arguments":{"word":"tea"}}</tool_call>\n<tool_call>{"name":"lookup","arguments":{"word":"milk"}}</tool_call>';
    const { result } = await turn([reply.text(text), reply.text('Both.')]);
    expect(ran.sort()).toEqual(['lookup:milk', 'lookup:tea']);
    const ids = (result.newMessages[0] as AssistantMessage).toolCalls.map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
  });

  it.each([
    ['bad JSON', '<tool_call>{"name":"lookup","arguments":{"word":}</tool_call>'],
    ['a tool not offered', '<tool_call>{"name":"format_disk","arguments":{}}</tool_call>'],
    ['text around the call', 'Let me look: <tool_call>{"name":"lookup","arguments":{"word":"tea"}}</tool_call>'],
  ])('leaves %s as the answer', async (_case, text) => {
    const { result } = await turn([reply.text(text)]);
    expect(ran).toEqual([]);
    expect(result).toMatchObject({ stopReason: 'completed', text, iterations: 1 });
  });

  it('leaves calls as text when the fallback is off', async () => {
    const text = '<tool_call>{"name":"lookup","arguments":{"word":"tea"}}</tool_call>';
    const { result } = await turn([reply.text(text)], { textToolCalls: false });
    expect(ran).toEqual([]);
    expect(result).toMatchObject({ stopReason: 'completed', text });
  });

  it('pauses for approval on a gated tool written as text, without running it', async () => {
    const { result } = await turn([reply.text('<function=erase>{"id":"r1"}</function>')]);
    expect(ran).toEqual([]);
    expect(result.stopReason).toBe('paused');
    expect(result.pending).toMatchObject({ approvals: [{ name: 'erase', arguments: '{"id":"r1"}' }], clientCalls: [] });
  });

  it("pauses for the client on a client tool written as text, after running the loop's own call", async () => {
    const text = '[TOOL_CALLS][{"name":"lookup","arguments":{"word":"tea"}},{"name":"get_location","arguments":{}}]';
    const { result } = await turn([reply.text(text)]);
    expect(ran).toEqual(['lookup:tea']);
    expect(result.stopReason).toBe('paused');
    expect(result.pending).toMatchObject({ approvals: [], clientCalls: [{ name: 'get_location' }] });
  });

  it('reads tool_search written as text, and then the tool it found, but not a deferred tool unfound', async () => {
    const { server, result } = await turn([reply.text('<tool_call>{"name":"lookup","arguments":{"word":"tea"}}</tool_call>')], { toolSearchThreshold: 1 });
    // Deferred and not found yet: not offered, so the text is an answer.
    expect(result.text).toContain('<tool_call>');
    expect(ran).toEqual([]);
    await server.close();

    const searched = await turn(
      [
        reply.text('<tool_call>{"name":"tool_search","arguments":{"query":"dictionary word"}}</tool_call>'),
        reply.text('<tool_call>{"name":"lookup","arguments":{"word":"tea"}}</tool_call>'),
        reply.text('Found it.'),
      ],
      { toolSearchThreshold: 1 },
    );
    expect(searched.result.text).toBe('Found it.');
    expect(ran).toEqual(['lookup:tea']);
    expect(searched.server.requests[1]!.body.tools?.map((t) => t.function.name)).toEqual(['tool_search', 'lookup']);
  });

  it("streams an answer's deltas, but not the text of calls", async () => {
    const events: AgentEvent[] = [];
    const call = '<tool_call>{"name":"lookup","arguments":{"word":"tea"}}</tool_call>';
    const answer = '```python\nprint("tea")\n```';
    await turn([reply.text(call, { chunkSize: 3 }), reply.text(answer, { chunkSize: 3 })], { onEvent: (e) => events.push(e) });
    const deltas = events.flatMap((e) => (e.type === 'delta' ? [e.text] : []));
    expect(deltas.join('')).toBe(answer);
    // The answer streams once it is plainly not a call, rather than all at once at the end.
    expect(deltas.length).toBeGreaterThan(2);
    expect(events.map((e) => e.type).filter((t) => t.startsWith('tool'))).toEqual(['tool_start', 'tool_end']);
  });

  it('sends a held-back beginning on when the reply turns out to be an answer', async () => {
    const events: AgentEvent[] = [];
    const text = '<tool_call> is how I would call a tool, but I will not.';
    const { result } = await turn([reply.text(text, { chunkSize: 4 })], { onEvent: (e) => events.push(e) });
    expect(result.text).toBe(text);
    expect(events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('')).toBe(text);
    // Before the event that ends the model's request, as an answer's deltas always are.
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf('delta')).toBeLessThan(types.indexOf('turn_end'));
  });
});
