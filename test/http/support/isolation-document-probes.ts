import { expect } from 'vitest';
import { ALPHA_DOCUMENT, ALPHA_USER, ALPHA_ERASED_USER, type TenantIsolationFixture } from './tenant-isolation-fixture.js';

/** Beta's attempts at alpha's documents, jobs, users, audit log and document search. Each runs between two snapshots of alpha's state. */
export function documentAndJobProbes(f: TenantIsolationFixture): Record<string, () => Promise<void>> {
  const { beta, seeded, expectNothingOfAlpha, expectNotFound } = f;
  return {
    'POST /v1/documents': async () => {
      // Alpha's source: a document of beta's own, not a replacement of alpha's.
      const res = await beta('POST', '/v1/documents', { title: 'Beta page', text: 'Beta keeps its own page here.', source: 'wiki://alpha' });
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('created');
      expect(res.body.document.id).not.toBe(seeded.documentId);
    },
    'GET /v1/documents': async () => {
      for (const query of ['', '?tagsAny=alpha-only', '?limit=200']) {
        const res = await beta('GET', `/v1/documents${query}`);
        expect(res.status).toBe(200);
        expectNothingOfAlpha(res, `document list ${query}`);
      }
    },
    'GET /v1/documents/:id': async () => {
      expectNotFound(await beta('GET', `/v1/documents/${seeded.documentId}`), 'document by id');
    },
    'GET /v1/documents/:id/chunks': async () => {
      expectNotFound(await beta('GET', `/v1/documents/${seeded.documentId}/chunks`), 'chunks');
    },
    'DELETE /v1/documents/:id': async () => {
      expectNotFound(await beta('DELETE', `/v1/documents/${seeded.documentId}`), 'document delete');
    },
    'GET /v1/jobs': async () => {
      for (const query of ['', '?status=succeeded', '?limit=200', '?kind=ingest', '?kind=batch', '?kind=batch&status=succeeded', '?kind=extraction']) {
        const res = await beta('GET', `/v1/jobs${query}`);
        expect(res.status).toBe(200);
        expectNothingOfAlpha(res, `job list ${query}`);
      }
    },
    'GET /v1/jobs/:id': async () => {
      for (const id of [seeded.jobId, seeded.batchId]) expectNotFound(await beta('GET', `/v1/jobs/${id}`), 'job by id');
    },
    'GET /v1/jobs/:id/events': async () => {
      for (const id of [seeded.jobId, seeded.batchId]) expectNotFound(await beta('GET', `/v1/jobs/${id}/events`), 'job events');
    },
    'POST /v1/jobs/:id/cancel': async () => {
      for (const id of [seeded.jobId, seeded.batchId]) expectNotFound(await beta('POST', `/v1/jobs/${id}/cancel`), 'job cancel');
    },
    'POST /v1/jobs/:id/retry': async () => {
      for (const id of [seeded.jobId, seeded.batchId]) expectNotFound(await beta('POST', `/v1/jobs/${id}/retry`), 'job retry');
    },
    'DELETE /v1/users/:userId': async () => {
      // Alpha's user, by name: beta erases its own (none), nothing of alpha's.
      const res = await beta('DELETE', `/v1/users/${ALPHA_USER}`);
      expect(res.status).toBe(200);
      expect(Object.values(res.body.erased).every((n) => n === 0)).toBe(true);
      expectNothingOfAlpha(res, 'user erasure');
    },
    'GET /v1/audit': async () => {
      for (const query of ['', `?userId=${ALPHA_ERASED_USER}`, '?limit=200']) {
        const res = await beta('GET', `/v1/audit${query}`);
        expect(res.status).toBe(200);
        const text = JSON.stringify(res.body);
        // Neither the user alpha erased nor alpha's key.
        expect(text.includes(ALPHA_ERASED_USER), text).toBe(false);
        expect(text.includes('env:1'), text).toBe(false);
        expectNothingOfAlpha(res, `audit ${query}`);
      }
    },
    'POST /v1/search': async () => {
      for (const mode of ['hybrid', 'vector', 'text']) {
        for (const reranker of ['none', 'lexical']) {
          const res = await beta('POST', '/v1/search', { query: ALPHA_DOCUMENT, mode, reranker, topK: 50 });
          expect(res.status).toBe(200);
          expectNothingOfAlpha(res, `document search (${mode}, ${reranker})`);
        }
      }
    },
  };
}
