import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedLlmServer, type ScriptedReply, reply } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, call, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';

/** MCP's `chat` tool takes `/v1/chat`'s turn options: instructions, sampling, reasoning effort, and the reply's reasoning. */
describe("MCP's chat tool with a model's options", () => {
  let ctx: AppContext;
  let llm: ScriptedLlmServer;
  let server: ListeningServer;
  let client: Client;
  let replies: ScriptedReply[] = [];

  beforeAll(async () => {
    ctx = await createTestContext();
    const made = await appWithScriptedLlm(ctx, () => replies.shift() ?? reply.text('ok'));
    llm = made.llm;
    expect((await call(made.app, 'POST', '/v1/agents', { id: 'desk', name: 'Desk', instructions: 'AGENT-RULE: answer briefly.' })).status).toBe(201);
    server = await listen(made.app);
    client = new Client({ name: 'memrag-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await ctx?.close();
    await llm?.close();
  });
  beforeEach(() => {
    replies = [];
    llm.requests.length = 0;
  });

  async function chat(args: Record<string, unknown>): Promise<{ isError: boolean; body: any }> {
    const result = (await client.callTool({ name: 'chat', arguments: args })) as CallToolResult;
    const first = result.content[0];
    if (first?.type !== 'text') throw new Error(`expected text, got ${JSON.stringify(result.content)}`);
    let body: unknown = first.text;
    try {
      body = JSON.parse(first.text);
    } catch {
      // The SDK's own argument validation answers plain text.
    }
    return { isError: result.isError === true, body };
  }

  it("sends the turn's instructions after the agent's, its sampling and effort, and returns the reasoning when asked", async () => {
    replies = [reply.text('Brief answer.', { reasoning: 'Thinking it over.' })];
    const res = await chat({
      message: 'Tell me something.',
      agentId: 'desk',
      instructions: 'TURN-RULE: end with a question.',
      sampling: { topP: 0.5, maxTokens: 64, seed: 3 },
      reasoning: { effort: 'high' },
      includeReasoning: true,
    });
    expect(res.isError).toBe(false);
    expect(res.body).toMatchObject({ answer: 'Brief answer.', reasoning: 'Thinking it over.', mode: 'llm' });
    const sent = llm.requests[0]!.body as Record<string, any>;
    expect(sent).toMatchObject({ reasoning_effort: 'high', top_p: 0.5, max_tokens: 64, seed: 3 });
    // Added to the agent's instructions, not in their place.
    const system = String(sent.messages[0].content);
    expect(system).toContain('AGENT-RULE: answer briefly.');
    expect(system).toContain('TURN-RULE: end with a question.');
    expect(system.indexOf('AGENT-RULE')).toBeLessThan(system.indexOf('TURN-RULE'));
  });

  it('returns no reasoning unless asked, and keeps it out of the answer', async () => {
    replies = [reply.text('<think>Hidden steps.</think>Plain answer.')];
    const res = await chat({ message: 'Tell me something else.', agentId: 'desk' });
    expect(res.isError).toBe(false);
    expect(res.body.answer).toBe('Plain answer.');
    expect(res.body).not.toHaveProperty('reasoning');
    expect(JSON.stringify(res.body)).not.toContain('Hidden steps');
  });

  it('refuses an unknown effort and a stop list over 4, naming the field, before any model call', async () => {
    const effort = await chat({ message: 'Hi', reasoning: { effort: 'extreme' } });
    expect(effort.isError).toBe(true);
    expect(JSON.stringify(effort.body)).toMatch(/effort/);
    const stop = await chat({ message: 'Hi', sampling: { stop: ['a', 'b', 'c', 'd', 'e'] } });
    expect(stop.isError).toBe(true);
    expect(JSON.stringify(stop.body)).toMatch(/stop/);
    expect(llm.requests).toHaveLength(0);
  });
});
