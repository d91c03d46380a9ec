import { expect } from 'vitest';
import type { TenantIsolationFixture } from './tenant-isolation-fixture.js';

/** Beta's attempts at alpha's working memory. Each runs between two snapshots of alpha's state (its blocks among them). */
export function blockProbes(f: TenantIsolationFixture): Record<string, () => Promise<void>> {
  const { alpha, beta, expectNothingOfAlpha, expectNotFound } = f;
  const scopes = ['agentId=alpha-agent', 'agentId=alpha-agent&userId=alpha-block-user', ''];
  return {
    'PUT /v1/blocks/:label': async () => {
      // A block on alpha's agent: beta has no agent by that id, and is told so by the field.
      const res = await beta('PUT', '/v1/blocks/alpha-notes', { agentId: 'alpha-agent', value: 'Beta overwrites it' });
      expectNotFound(res, 'block put on alpha agent');
      expect(JSON.stringify(res.body.error.details)).toContain('agentId');
      const own = await beta('PUT', '/v1/blocks/alpha-notes', { userId: 'alpha-block-user', value: 'Beta keeps its own' });
      expect(own.status).toBe(201);
      expectNothingOfAlpha(own, 'block put');
      expect((await beta('DELETE', '/v1/blocks/alpha-notes?userId=alpha-block-user')).status).toBe(204);
    },
    'GET /v1/blocks/:label': async () => {
      for (const q of scopes) expectNotFound(await beta('GET', `/v1/blocks/alpha-notes?${q}`), `block ${q}`);
      expectNotFound(await beta('GET', `/v1/blocks/alpha-notes?agentId=alpha-agent&asOf=${new Date().toISOString()}`), 'block as of');
    },
    'GET /v1/blocks': async () => {
      for (const q of scopes) {
        const res = await beta('GET', `/v1/blocks?${q}`);
        expect(res.status).toBe(200);
        expect(res.body.blocks).toEqual([]);
      }
    },
    'DELETE /v1/blocks/:label': async () => {
      for (const q of scopes) expectNotFound(await beta('DELETE', `/v1/blocks/alpha-notes?${q}`), `block delete ${q}`);
    },
    'GET /v1/blocks/:label/history': async () => {
      for (const q of scopes) {
        const res = await beta('GET', `/v1/blocks/alpha-notes/history?${q}`);
        expect(res.status).toBe(200);
        expect(res.body.events).toEqual([]);
      }
    },
    'POST /v1/blocks/:label/history/:eventId/approve': async () => {
      const events = (await alpha('GET', '/v1/blocks/alpha-notes/history?agentId=alpha-agent')).body.events as Array<{ id: number }>;
      expect(events.length).toBeGreaterThan(0);
      for (const { id } of events) expectNotFound(await beta('POST', `/v1/blocks/alpha-notes/history/${id}/approve?agentId=alpha-agent`), 'block approve');
    },
  };
}
