import type { Hono } from 'hono';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call, createApp, createTestContext } from './http-test-context.js';

/**
 * `PATCH /v1/agents/:id` with `null` clears a setting: each of the nullable settings the agent
 * loop, working memory and delegation added, on both drivers (settings are JSONB, where a null
 * kept as a value would read back as one).
 */

/** One value of each setting, as a client would send it and read it back. */
const SETTINGS = {
  sampling: { maxTokens: 256, topP: 0.9, stop: ['END'], seed: 7, presencePenalty: 0.5, frequencyPenalty: -0.5 },
  reasoning: { effort: 'high' },
  truncation: { maxContinuations: 3 },
  toolCalls: { textFallback: 'off', parallel: 2 },
  blocks: [{ label: 'persona', scope: 'agent', value: 'Speaks plainly.', limit: 500 }],
  cast: [{ agentId: 'researcher', role: 'research', description: 'Finds sources.' }],
  delegation: { maxDepth: 3, maxParallel: 2 },
} as const;
const FIELDS = Object.keys(SETTINGS) as Array<keyof typeof SETTINGS>;

describeOnDrivers('clearing the new agent settings with null', (driver) => {
  let ctx: AppContext;
  let app: Hono;
  let release: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    ctx = await createTestContext(opened.env);
    app = createApp(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
    await release?.();
  });

  it('clears each setting given as null, one patch at a time, and keeps the others', async () => {
    const created = await call(app, 'POST', '/v1/agents', { id: 'one-by-one', name: 'One by one', temperature: 0.3, ...SETTINGS });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ version: 1, temperature: 0.3, ...SETTINGS });

    const left: Record<string, unknown> = { ...SETTINGS };
    let version = 1;
    for (const field of FIELDS) {
      const res = await call(app, 'PATCH', '/v1/agents/one-by-one', { [field]: null });
      expect(res.status, `${field}: ${JSON.stringify(res.body)}`).toBe(200);
      version += 1;
      delete left[field];
      expect(res.body.version, field).toBe(version);
      expect(res.body, field).not.toHaveProperty(field);
      expect(res.body, field).toMatchObject({ temperature: 0.3, ...left });
      // As stored, not only as answered: read back, and as the version's own record.
      const read = await call(app, 'GET', '/v1/agents/one-by-one');
      expect(read.body, field).toEqual(res.body);
      const stored = await call(app, 'GET', `/v1/agents/one-by-one/versions/${version}`);
      expect(stored.status, field).toBe(200);
      expect(stored.body.settings, field).not.toHaveProperty(field);
      // The version before still has it.
      const before = await call(app, 'GET', `/v1/agents/one-by-one/versions/${version - 1}`);
      expect(before.body.settings[field], field).toEqual(SETTINGS[field]);
    }
    // Cleared already: null again changes nothing, so no new version.
    const again = await call(app, 'PATCH', '/v1/agents/one-by-one', Object.fromEntries(FIELDS.map((f) => [f, null])));
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(version);
  });

  it('clears them all in one patch, as one new version', async () => {
    expect((await call(app, 'POST', '/v1/agents', { id: 'all-at-once', name: 'All at once', ...SETTINGS })).status).toBe(201);
    const res = await call(app, 'PATCH', '/v1/agents/all-at-once', Object.fromEntries(FIELDS.map((f) => [f, null])));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.version).toBe(2);
    for (const field of FIELDS) expect(res.body, field).not.toHaveProperty(field);
    expect((await call(app, 'GET', '/v1/agents/all-at-once')).body).toEqual(res.body);
    // And set again after: a cleared setting is not stuck cleared.
    const reset = await call(app, 'PATCH', '/v1/agents/all-at-once', { cast: SETTINGS.cast, blocks: SETTINGS.blocks });
    expect(reset.body).toMatchObject({ version: 3, cast: SETTINGS.cast, blocks: SETTINGS.blocks });
    expect(reset.body).not.toHaveProperty('delegation');
  });
});
