import type { Hono } from 'hono';
import { expect, it } from 'vitest';
import { FOLLOW_UPS_MAX } from '../../src/runs/follow-ups-limit.js';
import { reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { readSse } from '../support/sse-reader.js';
import { call } from './http-test-context.js';
import { scriptedAgentApp } from './support/scripted-agent-app.js';

/** POST /v1/runs/:id/messages with `follow_up` queued without limit; the queue is capped with a 409 `follow_ups_full`. */
describeOnDrivers('follow-ups per run were unbounded', (driver) => {
  const { appWithLlm } = scriptedAgentApp(driver, { clear: false });

  it(`answers 409 follow_ups_full past ${FOLLOW_UPS_MAX} follow-ups, and queues nothing more`, async () => {
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    const made = await appWithLlm([reply.text('Held.', { holdUntil: held })]);
    const app: Hono = made.app;
    const res = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Hi', stream: true }),
    });
    const stream = readSse(res);
    const { runId } = (await stream.until('retrieval')).data as { runId: string };

    for (let i = 0; i < FOLLOW_UPS_MAX; i++) {
      const queued = await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: `next ${i}`, mode: 'follow_up' });
      expect(queued.status, `follow-up ${i}`).toBe(202);
    }
    const full = await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'one too many', mode: 'follow_up' });
    expect(full.status).toBe(409);
    expect(full.body.error).toMatchObject({ code: 'follow_ups_full', message: expect.stringContaining(String(FOLLOW_UPS_MAX)) });
    const run = await call(app, 'GET', `/v1/runs/${runId}`);
    expect(run.body.followUps).toHaveLength(FOLLOW_UPS_MAX);
    expect(run.body.followUps.map((f: { message: string }) => f.message)).not.toContain('one too many');

    // Cancelled, the run starts none of them: the script holds no reply for them.
    expect((await call(app, 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(200);
    open();
    await stream.all();
    // Ended, a follow-up is still a run_finished, not a full queue.
    const ended = await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'after', mode: 'follow_up' });
    expect(ended.status).toBe(409);
    expect(ended.body.error.code).toBe('run_finished');
  });
});
