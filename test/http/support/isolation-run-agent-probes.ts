import { expect } from 'vitest';
import { PROVIDER_KEY, type TenantIsolationFixture } from './tenant-isolation-fixture.js';

/** Beta's attempts at alpha's runs and agents. Each runs between two snapshots of alpha's state. */
export function runAndAgentProbes(f: TenantIsolationFixture): Record<string, () => Promise<void>> {
  const { alpha, beta, seeded, expectNothingOfAlpha, expectNotFound } = f;
  return {
    'GET /v1/runs/:runId': async () => {
      for (const id of [seeded.runId, seeded.pausedRunId]) expectNotFound(await beta('GET', `/v1/runs/${id}`), 'run by id');
    },
    'POST /v1/runs/:runId/tool-outputs': async () => {
      expectNotFound(
        await beta('POST', `/v1/runs/${seeded.pausedRunId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'alpha-call', output: 'beta' }] }),
        'tool outputs',
      );
      expectNotFound(
        await beta('POST', `/v1/runs/${seeded.pausedRunId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'alpha-call', output: 'beta' }], stream: true }),
        'streamed tool outputs',
      );
    },
    'POST /v1/runs/:runId/approvals': async () => {
      expectNotFound(await beta('POST', `/v1/runs/${seeded.pausedRunId}/approvals`, { decisions: [{ toolCallId: 'alpha-call', approve: true }] }), 'approvals');
    },
    'POST /v1/runs/:runId/cancel': async () => {
      for (const id of [seeded.runId, seeded.pausedRunId]) expectNotFound(await beta('POST', `/v1/runs/${id}/cancel`), 'run cancel');
    },
    'POST /v1/runs/:runId/messages': async () => {
      // Alpha's ended, waiting and paused runs: a leak would be a 202 (or a 409 telling beta the run's state).
      for (const id of [seeded.runId, seeded.pausedRunId, seeded.stoppedRunId]) {
        for (const mode of ['steer', 'follow_up']) {
          expectNotFound(await beta('POST', `/v1/runs/${id}/messages`, { message: 'Beta speaking', mode }), `run message (${mode})`);
        }
      }
    },
    'POST /v1/runs/:runId/pause': async () => {
      for (const id of [seeded.runId, seeded.pausedRunId, seeded.stoppedRunId]) expectNotFound(await beta('POST', `/v1/runs/${id}/pause`), 'run pause');
    },
    'POST /v1/runs/:runId/resume': async () => {
      for (const body of [undefined, {}, { stream: true }]) {
        const res = await beta('POST', `/v1/runs/${seeded.stoppedRunId}/resume`, body);
        expect(res.headers.get('content-type'), 'a refusal, not a stream').toContain('application/json');
        expectNotFound(res, `run resume ${JSON.stringify(body)}`);
      }
    },
    'GET /v1/providers': async () => {
      // The deployment's providers: the same list for every tenant, without the key.
      const res = await beta('GET', '/v1/providers');
      expect(res.status).toBe(200);
      expect(res.body.providers).toMatchObject([{ name: 'shared', baseURL: 'http://127.0.0.1:9/v1' }]);
      expect(Object.keys(res.body.providers[0]).sort()).toEqual(['baseURL', 'defaultModel', 'name']);
      expect(res.body).toEqual((await alpha('GET', '/v1/providers')).body);
      expect(JSON.stringify(res.body)).not.toContain(PROVIDER_KEY);
      expectNothingOfAlpha(res, 'provider list');
    },
    'GET /v1/providers/:name/models': async () => {
      // Asked of no provider (nothing listens on the configured one's port): an unknown name is refused first.
      for (const name of ['alpha', 'unknown-provider']) expectNotFound(await beta('GET', `/v1/providers/${name}/models`), 'provider models');
    },
    'GET /v1/runs/:runId/events': async () => {
      expectNotFound(await beta('GET', `/v1/runs/${seeded.pausedRunId}/events`), 'run events');
    },
    'POST /v1/agents': async () => {
      // Alpha's id: beta's own agent under it, not a 409 that would tell beta the id is taken.
      const res = await beta('POST', '/v1/agents', { id: 'alpha-agent', name: 'Beta agent' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ id: 'alpha-agent', version: 1, name: 'Beta agent' });
      expectNothingOfAlpha(res, 'agent create');
      expect((await beta('DELETE', '/v1/agents/alpha-agent')).status).toBe(204);
    },
    'GET /v1/agents': async () => {
      for (const query of ['', '?limit=200']) {
        const res = await beta('GET', `/v1/agents${query}`);
        expect(res.status).toBe(200);
        expect(res.body.items.map((a: { id: string }) => a.id)).not.toContain('alpha-agent');
        expectNothingOfAlpha(res, `agent list ${query}`);
      }
    },
    'GET /v1/agents/:id': async () => {
      expectNotFound(await beta('GET', '/v1/agents/alpha-agent'), 'agent by id');
    },
    'PATCH /v1/agents/:id': async () => {
      expectNotFound(await beta('PATCH', '/v1/agents/alpha-agent', { name: 'Beta renames it', instructions: null }), 'agent patch');
    },
    'DELETE /v1/agents/:id': async () => {
      expectNotFound(await beta('DELETE', '/v1/agents/alpha-agent'), 'agent delete');
    },
    'GET /v1/agents/:id/versions': async () => {
      expectNotFound(await beta('GET', '/v1/agents/alpha-agent/versions'), 'agent versions');
    },
    'GET /v1/agents/:id/versions/:version': async () => {
      for (const version of [1, 2]) expectNotFound(await beta('GET', `/v1/agents/alpha-agent/versions/${version}`), `agent version ${version}`);
    },
  };
}
