import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { appWithScriptedLlm, call, createTestContext } from './http-test-context.js';

/** A catastrophic `outputMatches` regex on a long model answer froze the process for every tenant (ReDoS). */

describeOnDrivers('a workflow edge with a catastrophic regex', (driver) => {
  let ctx: AppContext;
  let release: (() => Promise<void>) | undefined;
  let server: ScriptedLlmServer | undefined;

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    ctx = await createTestContext(opened.env);
    for (const table of ['agents', 'agent_versions', 'runs', 'workflows', 'workflow_versions']) await ctx.database.db.execute(sql.raw(`DELETE FROM ${table}`));
  });
  afterAll(async () => {
    await server?.close();
    await ctx?.close();
    await release?.();
  });

  it('fails the run promptly, recorded failed, instead of freezing the event loop', async () => {
    const made = await appWithScriptedLlm(ctx, () => reply.text(`${'a'.repeat(50_000)}!`));
    server = made.llm;
    const { app } = made;
    expect((await call(app, 'POST', '/v1/agents', { id: 'talker', name: 'talker' })).status).toBe(201);
    const workflow = {
      id: 'redos',
      name: 'ReDoS',
      entry: 'talk',
      nodes: [
        { id: 'talk', agentId: 'talker', prompt: '{{input}}' },
        { id: 'next', agentId: 'talker', prompt: 'again' },
      ],
      edges: [{ from: 'talk', to: 'next', when: { outputMatches: '(a+)+$' } }],
    };
    expect((await call(app, 'POST', '/v1/workflows', workflow)).status).toBe(201);
    const started = Date.now();
    const ran = await call(app, 'POST', '/v1/workflows/redos/runs', { input: 'go' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ran.status, JSON.stringify(ran.body)).toBe(422);
    expect(ran.body).toMatchObject({ error: { code: 'workflow_edge_timeout', message: expect.stringContaining('edges.0.when.outputMatches') } });
    const runs = (await ctx.database.db.execute(sql`SELECT status, error FROM runs WHERE agent_id = 'workflow:redos'`)) as unknown as {
      rows: Array<{ status: string; error: { code: string } }>;
    };
    expect(runs.rows).toMatchObject([{ status: 'failed', error: { code: 'workflow_failed' } }]);
  });
});
