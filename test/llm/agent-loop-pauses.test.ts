import { describe, expect, it } from 'vitest';
import { deniedResult, runAgentTurn } from '../../src/llm/agent-loop.js';
import { reply } from '../../testkit/scripted-llm-server.js';
import { scriptedTurn } from './support/scripted-turn.js';

const clientTool = {
  name: 'get_location',
  description: "The user's location, from their device",
  parameters: { type: 'object', properties: { precise: { type: 'boolean' } }, required: ['precise'] },
  validate: (args: unknown) => (typeof (args as { precise?: unknown })?.precise === 'boolean' ? undefined : 'precise must be a boolean'),
};

const { ran, start } = scriptedTurn(clientTool);

describe('runAgentTurn pauses', () => {
  it('runs the built-in call of a reply and pauses for the client one, then resumes with its output', async () => {
    const { server, base } = await start([
      reply.toolCalls([
        { id: 'b', name: 'lookup', arguments: '{"word":"tea"}' },
        { id: 'c', name: 'get_location', arguments: '{"precise":true}' },
      ]),
      reply.text('You are in Oslo, and tea is a drink.'),
    ]);
    const paused = await runAgentTurn(base);
    expect(paused.stopReason).toBe('paused');
    expect(paused.pending).toEqual({ approvals: [], clientCalls: [{ id: 'c', name: 'get_location', arguments: '{"precise":true}' }] });
    expect(ran).toEqual(['lookup:tea']);
    expect(server.requests).toHaveLength(1);

    // Through JSON, as the state is stored.
    const state = JSON.parse(JSON.stringify(paused.state));
    const done = await runAgentTurn({ ...base, resume: { state, outputs: new Map([['c', 'Oslo']]) } });
    expect(done.stopReason).toBe('completed');
    expect(done.text).toBe('You are in Oslo, and tea is a drink.');
    expect(done.iterations).toBe(2);
    expect(done.usage.totalTokens).toBe(30);
    const tools = server.requests[1]!.body.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['b', 'meaning of tea'],
      ['c', 'Oslo'],
    ]);
  });

  it('sends client arguments that fail their schema back to the model instead of pausing', async () => {
    const { server, base } = await start([reply.toolCalls([{ id: 'c', name: 'get_location', arguments: '{"precise":"yes"}' }]), reply.text('sorry')]);
    const result = await runAgentTurn(base);
    expect(result.stopReason).toBe('completed');
    const tool = server.requests[1]!.body.messages.find((m) => m.role === 'tool');
    expect(tool?.content).toContain('precise must be a boolean');
  });

  it('pauses for approval; an approved call runs, a denied one reaches the model with its reason', async () => {
    const { server, base } = await start([
      reply.toolCalls([
        { id: 'e1', name: 'erase', arguments: '{"id":"1"}' },
        { id: 'e2', name: 'erase', arguments: '{"id":"2"}' },
      ]),
      reply.text('Erased 1; 2 was refused.'),
    ]);
    const paused = await runAgentTurn(base);
    expect(paused.stopReason).toBe('paused');
    expect(paused.pending?.approvals.map((c) => c.id)).toEqual(['e1', 'e2']);
    expect(ran).toEqual([]);
    const done = await runAgentTurn({
      ...base,
      resume: {
        state: paused.state,
        decisions: new Map([
          ['e1', { approve: true }],
          ['e2', { approve: false, reason: 'keep it' }],
        ]),
      },
    });
    expect(done.stopReason).toBe('completed');
    expect(ran).toEqual(['erase:1']);
    const tools = server.requests[1]!.body.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual(['{"erased":"1"}', deniedResult('keep it')]);
  });

  it('after approvals, still waits for the client call of the same reply', async () => {
    const { server, base } = await start([
      reply.toolCalls([
        { id: 'e', name: 'erase', arguments: '{"id":"9"}' },
        { id: 'c', name: 'get_location', arguments: '{"precise":false}' },
      ]),
      reply.text('ok'),
    ]);
    const first = await runAgentTurn(base);
    expect(first.pending).toEqual({ approvals: [expect.objectContaining({ id: 'e' })], clientCalls: [expect.objectContaining({ id: 'c' })] });
    const second = await runAgentTurn({ ...base, resume: { state: first.state, decisions: new Map([['e', { approve: true }]]) } });
    expect(second.stopReason).toBe('paused');
    expect(second.pending).toEqual({ approvals: [], clientCalls: [expect.objectContaining({ id: 'c' })] });
    expect(server.requests).toHaveLength(1);
    const third = await runAgentTurn({ ...base, resume: { state: second.state, outputs: new Map([['c', 'Lima']]) } });
    expect(third.stopReason).toBe('completed');
    expect(ran).toEqual(['erase:9']);
  });

  it('with more tools than the threshold, advertises tool_search only, and keeps what it found visible', async () => {
    const { server, base } = await start([
      reply.toolCalls([{ id: 's', name: 'tool_search', arguments: '{"query":"look up a word"}' }]),
      reply.toolCalls([{ id: 'l', name: 'lookup', arguments: '{"word":"oolong"}' }]),
      reply.text('Oolong is a tea.'),
    ]);
    const result = await runAgentTurn({ ...base, toolSearchThreshold: 2 });
    expect(result.stopReason).toBe('completed');
    const advertised = (i: number) => server.requests[i]!.body.tools?.map((t) => t.function.name);
    expect(advertised(0)).toEqual(['tool_search']);
    expect(advertised(1)).toEqual(['tool_search', 'lookup']);
    expect(advertised(2)).toEqual(['tool_search', 'lookup']);
    expect(JSON.parse(String(server.requests[1]!.body.messages.find((m) => m.role === 'tool')?.content)).tools[0].name).toBe('lookup');
    expect(result.state.promoted).toEqual(['lookup']);
  });

  it('pauses for a client call whose id the server reused from an earlier reply of the turn', async () => {
    const { base } = await start([
      reply.toolCalls([{ id: 'call_0', name: 'lookup', arguments: '{"word":"tea"}' }]),
      reply.toolCalls([{ id: 'call_0', name: 'get_location', arguments: '{"precise":true}' }]),
    ]);
    const result = await runAgentTurn(base);
    expect(result.stopReason).toBe('paused');
    expect(result.pending?.clientCalls.map((c) => c.name)).toEqual(['get_location']);
  });
});
