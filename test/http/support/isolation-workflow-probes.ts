import { expect } from 'vitest';
import type { TenantIsolationFixture } from './tenant-isolation-fixture.js';

/** Beta's attempts at alpha's workflows. Each runs between two snapshots of alpha's state. */
export function workflowProbes(f: TenantIsolationFixture): Record<string, () => Promise<void>> {
  const { beta, expectNothingOfAlpha, expectNotFound } = f;
  const flow = { name: 'Beta flow', entry: 'a', nodes: [{ id: 'a', agentId: 'beta-agent', prompt: '{{input}}' }] };
  return {
    'POST /v1/workflows': async () => {
      // Alpha's id: beta's own workflow under it, not a 409 that would tell beta the id is taken.
      const res = await beta('POST', '/v1/workflows', { id: 'alpha-workflow', ...flow });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ id: 'alpha-workflow', version: 1, name: 'Beta flow' });
      expectNothingOfAlpha(res, 'workflow create');
      expect((await beta('DELETE', '/v1/workflows/alpha-workflow')).status).toBe(204);
    },
    'GET /v1/workflows': async () => {
      const res = await beta('GET', '/v1/workflows?limit=200');
      expect(res.status).toBe(200);
      expect(res.body.items.map((w: { id: string }) => w.id)).not.toContain('alpha-workflow');
      expectNothingOfAlpha(res, 'workflow list');
    },
    'GET /v1/workflows/:id': async () => {
      expectNotFound(await beta('GET', '/v1/workflows/alpha-workflow'), 'workflow by id');
    },
    'PATCH /v1/workflows/:id': async () => {
      expectNotFound(await beta('PATCH', '/v1/workflows/alpha-workflow', { name: 'Beta renames it' }), 'workflow patch');
    },
    'DELETE /v1/workflows/:id': async () => {
      expectNotFound(await beta('DELETE', '/v1/workflows/alpha-workflow'), 'workflow delete');
    },
    'GET /v1/workflows/:id/versions': async () => {
      expectNotFound(await beta('GET', '/v1/workflows/alpha-workflow/versions'), 'workflow versions');
    },
    'POST /v1/workflows/:id/runs': async () => {
      expectNotFound(await beta('POST', '/v1/workflows/alpha-workflow/runs', { input: 'zanzibarite?' }), 'workflow run');
    },
  };
}
