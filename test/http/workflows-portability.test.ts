import type { Hono } from 'hono';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call, createApp, createTestContext } from './http-test-context.js';

/** Workflows travel in a tenant's export beside agents, with their versions, and come back on import. */

const FLOW = { name: 'Triage', entry: 'a', nodes: [{ id: 'a', agentId: 'desk', prompt: 'Answer {{input}}' }] };

describeOnDrivers('workflows in export and import', (driver) => {
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

  const exportLines = async (query = '') => {
    const res = await app.request(`/v1/export${query}`);
    expect(res.status).toBe(200);
    return (await res.text())
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  it('exports a workflow with its versions, and imports it back as it was', async () => {
    expect((await call(app, 'POST', '/v1/workflows', { id: 'moved', ...FLOW })).status).toBe(201);
    expect((await call(app, 'PATCH', '/v1/workflows/moved', { name: 'Triage v2' })).status).toBe(200);
    const lines = await exportLines();
    const line = lines.find((l) => l.type === 'workflow' && l.id === 'moved');
    expect(line).toMatchObject({ version: 2, definition: { name: 'Triage v2' }, versions: [{ version: 1 }, { version: 2 }] });
    // Not the user's nor an agent's: left out of a narrowed export.
    expect((await exportLines('?userId=someone')).some((l) => l.type === 'workflow')).toBe(false);

    expect((await call(app, 'DELETE', '/v1/workflows/moved')).status).toBe(204);
    const file = `${[lines[0], line].map((l) => JSON.stringify(l)).join('\n')}\n`;
    const imported = await app.request('/v1/import', { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: file });
    expect(imported.status).toBe(200);
    expect(await imported.json()).toMatchObject({ imported: { workflows: 1 }, skipped: 0, errors: [] });
    expect((await call(app, 'GET', '/v1/workflows/moved')).body).toMatchObject({ version: 2, name: 'Triage v2' });
    const versions = await call(app, 'GET', '/v1/workflows/moved/versions');
    expect((versions.body as { items: Array<{ version: number }> }).items.map((v) => v.version)).toEqual([2, 1]);

    // Imported again: the tenant has it, so it is skipped.
    const again = await app.request('/v1/import', { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: file });
    expect(await again.json()).toMatchObject({ skipped: 1, errors: [] });
  });

  it('refuses a workflow line whose definition breaks the graph, writing nothing', async () => {
    const [header] = await exportLines();
    const bad = {
      type: 'workflow',
      id: 'broken',
      version: 1,
      definition: { ...FLOW, entry: 'nowhere' },
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      versions: [],
    };
    const res = await app.request('/v1/import', {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: `${JSON.stringify(header)}\n${JSON.stringify(bad)}\n`,
    });
    expect(res.status).toBe(200);
    const report = (await res.json()) as { errors: Array<{ line: number; message: string }> };
    expect(report.errors).toEqual([{ line: 2, message: expect.stringContaining('entry') }]);
    expect((await call(app, 'GET', '/v1/workflows/broken')).status).toBe(404);
  });
});
