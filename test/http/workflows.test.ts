import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedLlmServer, type ScriptedRequest, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { parseSse } from '../support/parse-sse.js';
import { appWithScriptedLlm, call, clearConversations, createTestContext } from './http-test-context.js';

/** Workflows: versioned graphs of agent steps, each run a run whose steps are its children. */

const MARK = (id: string) => `[INSTRUCTIONS-OF-${id.toUpperCase()}]`;
const systemOf = (request: ScriptedRequest) => String(request.body.messages.find((m) => m.role === 'system')?.content ?? '');
const lastUser = (request: ScriptedRequest) => String(request.body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

const ROUTER = {
  name: 'Support triage',
  entry: 'classify',
  nodes: [
    { id: 'classify', agentId: 'classifier', prompt: 'Classify: {{input}}' },
    { id: 'billing', agentId: 'billing-desk', prompt: 'Billing case ({{nodes.classify.output}}) for {{state.customer}}: {{input}}' },
    { id: 'tech', agentId: 'tech-desk', prompt: 'Tech case: {{nodes.classify.output}}' },
  ],
  edges: [
    { from: 'classify', to: 'billing', when: { outputEquals: 'billing' } },
    { from: 'classify', to: 'tech', when: { outputMatches: '^tech' } },
  ],
};

describeOnDrivers('workflows', (driver) => {
  let ctx: AppContext;
  let release: (() => Promise<void>) | undefined;
  let server: ScriptedLlmServer | undefined;

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    ctx = await createTestContext(opened.env);
  });
  afterAll(async () => {
    await ctx?.close();
    await release?.();
  });
  beforeEach(async () => {
    await clearConversations(ctx);
    for (const table of ['agents', 'agent_versions', 'runs', 'workflows', 'workflow_versions']) await ctx.database.db.execute(sql.raw(`DELETE FROM ${table}`));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** An app whose model answers each agent by `answer(agentId, request)`. */
  async function appFor(ids: string[], answer: (id: string, request: ScriptedRequest) => string): Promise<{ app: Hono; llm: ScriptedLlmServer }> {
    const made = await appWithScriptedLlm(ctx, (request) => {
      const id = ids.find((candidate) => systemOf(request).includes(MARK(candidate)));
      return id ? reply.text(answer(id, request)) : reply.error(500, { message: 'no agent' });
    });
    server = made.llm;
    for (const id of ids) expect((await call(made.app, 'POST', '/v1/agents', { id, name: id, instructions: MARK(id) })).status).toBe(201);
    return made;
  }

  it('creates, reads, lists, versions and deletes a workflow', async () => {
    const { app } = await appFor([], () => '');
    const created = await call(app, 'POST', '/v1/workflows', { id: 'triage', ...ROUTER });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ id: 'triage', version: 1, entry: 'classify' });
    expect((await call(app, 'POST', '/v1/workflows', { id: 'triage', ...ROUTER })).status).toBe(409);
    expect((await call(app, 'GET', '/v1/workflows/triage')).body).toMatchObject({ name: 'Support triage' });
    const patched = await call(app, 'PATCH', '/v1/workflows/triage', { name: 'Triage', maxSteps: 5 });
    expect(patched.body).toMatchObject({ version: 2, name: 'Triage', maxSteps: 5, nodes: ROUTER.nodes });
    const versions = await call(app, 'GET', '/v1/workflows/triage/versions');
    expect((versions.body as { items: Array<{ version: number }> }).items.map((v) => v.version)).toEqual([2, 1]);
    expect((await call(app, 'GET', '/v1/workflows')).body).toMatchObject({ items: [{ id: 'triage' }] });
    expect((await call(app, 'DELETE', '/v1/workflows/triage')).status).toBe(204);
    expect((await call(app, 'GET', '/v1/workflows/triage')).status).toBe(404);
  });

  it('refuses bad definitions with a 400 naming the field, and writes nothing', async () => {
    const { app } = await appFor([], () => '');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...ROUTER, nodes: [...ROUTER.nodes, { id: 'tech', agentId: 'x', prompt: 'p' }] }, 'nodes.3.id'],
      [{ ...ROUTER, edges: [{ from: 'nowhere', to: 'tech' }] }, 'edges.0.from'],
      [{ ...ROUTER, edges: [{ from: 'classify', to: 'nowhere' }] }, 'edges.0.to'],
      [{ ...ROUTER, entry: 'missing' }, 'entry'],
      [{ ...ROUTER, edges: [{ from: 'classify', to: 'tech', when: { outputMatches: '(unclosed' } }] }, 'edges.0.when.outputMatches'],
      [{ ...ROUTER, maxSteps: 201 }, 'maxSteps'],
    ];
    for (const [body, field] of cases) {
      const res = await call(app, 'POST', '/v1/workflows', { id: 'bad', ...body });
      expect(res.status, field).toBe(400);
      expect(JSON.stringify(res.body), field).toContain(field);
    }
    const { entry: _entry, ...noEntry } = ROUTER;
    expect((await call(app, 'POST', '/v1/workflows', { id: 'bad', ...noEntry })).status).toBe(400);
    expect((await call(app, 'GET', '/v1/workflows/bad')).status).toBe(404);
    // A patch that breaks the graph is refused as a whole, and the version stays.
    expect((await call(app, 'POST', '/v1/workflows', { id: 'good', ...ROUTER })).status).toBe(201);
    const broken = await call(app, 'PATCH', '/v1/workflows/good', { entry: 'gone' });
    expect(broken.status).toBe(400);
    expect(JSON.stringify(broken.body)).toContain('entry');
    expect((await call(app, 'GET', '/v1/workflows/good')).body).toMatchObject({ version: 1 });
  });

  it('routes on outputEquals and on outputMatches, filling the templates', async () => {
    let verdict = 'billing';
    const { app, llm } = await appFor(['classifier', 'billing-desk', 'tech-desk'], (id) =>
      id === 'classifier' ? verdict : id === 'billing-desk' ? 'Refund issued.' : 'Rebooted.',
    );
    expect((await call(app, 'POST', '/v1/workflows', { id: 'triage', ...ROUTER })).status).toBe(201);

    const billed = await call(app, 'POST', '/v1/workflows/triage/runs', { input: { customer: 'Ada', issue: 'charged twice' }, userId: 'u1' });
    expect(billed.status, JSON.stringify(billed.body)).toBe(200);
    expect(billed.body).toMatchObject({ status: 'completed', stopReason: 'completed', output: 'Refund issued.', path: ['classify', 'billing'] });
    const billingRequest = llm.requests.find((r) => systemOf(r).includes(MARK('billing-desk')))!;
    expect(lastUser(billingRequest)).toContain('Billing case (billing) for Ada: {"customer":"Ada","issue":"charged twice"}');

    verdict = 'tech: the router';
    const teched = await call(app, 'POST', '/v1/workflows/triage/runs', { input: 'my router is down' });
    expect(teched.body).toMatchObject({ status: 'completed', output: 'Rebooted.', path: ['classify', 'tech'] });
    const techRequest = llm.requests.find((r) => systemOf(r).includes(MARK('tech-desk')))!;
    expect(lastUser(techRequest)).toContain('Tech case: tech: the router');

    // No edge holds: the run ends at the classifier.
    verdict = 'neither';
    const ended = await call(app, 'POST', '/v1/workflows/triage/runs', { input: 'hello' });
    expect(ended.body).toMatchObject({ status: 'completed', output: 'neither', path: ['classify'] });

    // The run is a run: its steps are its children.
    const { runId, steps } = teched.body as { runId: string; steps: Array<{ runId: string }> };
    const run = await call(app, 'GET', `/v1/runs/${runId}`);
    expect(run.body).toMatchObject({
      status: 'completed',
      agentId: 'workflow:triage',
      children: [
        { runId: steps[0]!.runId, role: 'classify', agentId: 'classifier', status: 'completed' },
        { runId: steps[1]!.runId, role: 'tech', agentId: 'tech-desk', status: 'completed' },
      ],
    });
    expect((await call(app, 'GET', `/v1/runs/${steps[0]!.runId}`)).body).toMatchObject({ parentRunId: runId });
  });

  it('fails a cycle at maxSteps', async () => {
    const { app } = await appFor(['looper'], () => 'again');
    const loop = {
      name: 'Loop',
      entry: 'a',
      nodes: [{ id: 'a', agentId: 'looper', prompt: 'Go {{nodes.a.output}}' }],
      edges: [{ from: 'a', to: 'a' }],
      maxSteps: 3,
    };
    expect((await call(app, 'POST', '/v1/workflows', { id: 'loop', ...loop })).status).toBe(201);
    const res = await call(app, 'POST', '/v1/workflows/loop/runs', { input: 'x' });
    expect(res.body).toMatchObject({ status: 'failed', stopReason: 'max_steps', path: ['a', 'a', 'a'] });
    const run = await call(app, 'GET', `/v1/runs/${(res.body as { runId: string }).runId}`);
    expect(run.body).toMatchObject({ status: 'failed', stopReason: 'max_steps' });
    expect((run.body as { children: unknown[] }).children).toHaveLength(3);
  });

  it("pauses on a step's approval, and resumes the step then the graph when it is answered through the workflow's run", async () => {
    await ctx.memories.forTenant('default').save({ key: 'stale', content: 'A stale note', agentId: 'cleaner', userId: 'u1' });
    const made = await appWithScriptedLlm(ctx, (request) => {
      const system = systemOf(request);
      if (system.includes(MARK('cleaner'))) {
        const answered = request.body.messages.some((m) => m.role === 'tool');
        return answered ? reply.text('cleaned') : reply.toolCalls([{ id: 'del1', name: 'delete_memory', arguments: JSON.stringify({ key: 'stale' }) }]);
      }
      return reply.text(lastUser(request).includes('Report: cleaned') ? 'Reported: cleaned' : 'Reported: something else');
    });
    server = made.llm;
    const { app } = made;
    for (const id of ['cleaner', 'reporter']) expect((await call(app, 'POST', '/v1/agents', { id, name: id, instructions: MARK(id) })).status).toBe(201);
    const flow = {
      name: 'Clean then report',
      entry: 'clean',
      nodes: [
        { id: 'clean', agentId: 'cleaner', prompt: 'Clean up for {{input}}' },
        { id: 'report', agentId: 'reporter', prompt: 'Report: {{nodes.clean.output}}' },
      ],
      edges: [{ from: 'clean', to: 'report', when: { outputEquals: 'cleaned' } }],
    };
    expect((await call(app, 'POST', '/v1/workflows', { id: 'cleanup', ...flow })).status).toBe(201);
    const paused = await call(app, 'POST', '/v1/workflows/cleanup/runs', { input: 'u1', userId: 'u1' });
    expect(paused.body).toMatchObject({
      status: 'requires_approval',
      stopReason: 'paused',
      path: [],
      approvals: [{ toolCallId: 'del1', name: 'delete_memory' }],
    });
    const { runId, approvals } = paused.body as { runId: string; approvals: Array<{ runId: string }> };
    const stepRunId = approvals[0]!.runId;
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({
      status: 'requires_approval',
      approvals: [{ toolCallId: 'del1', runId: stepRunId }],
      children: [{ runId: stepRunId, role: 'clean', status: 'requires_approval' }],
    });

    const resumed = await call(app, 'POST', `/v1/runs/${runId}/approvals`, { decisions: [{ toolCallId: 'del1', approve: true }] });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body).toMatchObject({ runId, status: 'completed', path: ['clean', 'report'], output: 'Reported: cleaned' });
    expect(await ctx.memories.forTenant('default').get('stale', { agentId: 'cleaner', userId: 'u1' })).toBeNull();
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({
      status: 'completed',
      children: [{ status: 'completed' }, { status: 'completed' }],
    });
    // Answered once: a second answer is a conflict.
    expect((await call(app, 'POST', `/v1/runs/${runId}/approvals`, { decisions: [{ toolCallId: 'del1', approve: true }] })).status).toBe(409);
  });

  it('streams each step as delegate_start and delegate_end, then done with the reply', async () => {
    const { app } = await appFor(['looper'], () => 'once');
    const flow = { name: 'One', entry: 'a', nodes: [{ id: 'a', agentId: 'looper', prompt: '{{input}}' }] };
    expect((await call(app, 'POST', '/v1/workflows', { id: 'one', ...flow })).status).toBe(201);
    const res = await app.request('/v1/workflows/one/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'go', stream: true }),
    });
    const events = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual(['delegate_start', 'delegate_end', 'done']);
    expect(events[0]!.data).toMatchObject({ role: 'a', agentId: 'looper' });
    expect(events[2]!.data).toMatchObject({ status: 'completed', output: 'once', path: ['a'] });
  });

  it('cancels the running step with its workflow run', async () => {
    let stepAsked!: () => void;
    const asked = new Promise<void>((resolve) => (stepAsked = resolve));
    const made = await appWithScriptedLlm(ctx, () => (stepAsked(), reply.text('late', { holdUntil: new Promise(() => {}) })));
    server = made.llm;
    const { app } = made;
    const flow = { name: 'Slow', entry: 'a', nodes: [{ id: 'a', agentId: 'slow', prompt: '{{input}}' }] };
    expect((await call(app, 'POST', '/v1/workflows', { id: 'slow', ...flow })).status).toBe(201);
    const running = call(app, 'POST', '/v1/workflows/slow/runs', { input: 'go' });
    await asked;
    const rows = (await ctx.database.db.execute(sql`SELECT id FROM runs WHERE agent_id = 'workflow:slow'`)) as unknown as { rows: Array<{ id: string }> };
    const runId = rows.rows[0]!.id;
    expect((await call(app, 'POST', `/v1/runs/${runId}/cancel`)).body).toMatchObject({ status: 'cancelled' });
    expect((await running).body).toMatchObject({ runId, status: 'cancelled', stopReason: 'cancelled' });
    const children = (await call(app, 'GET', `/v1/runs/${runId}`)).body as { children: Array<{ runId: string }> };
    await expect.poll(async () => ((await call(app, 'GET', `/v1/runs/${children.children[0]!.runId}`)).body as { status: string }).status).toBe('cancelled');
  });

  it('answers 404 for a run of an unknown workflow and 400 for a run without input', async () => {
    const { app } = await appFor([], () => '');
    expect((await call(app, 'POST', '/v1/workflows/none/runs', { input: 'x' })).status).toBe(404);
    expect((await call(app, 'POST', '/v1/workflows', { id: 'triage', ...ROUTER })).status).toBe(201);
    const res = await call(app, 'POST', '/v1/workflows/triage/runs', {});
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('input');
  });
});
