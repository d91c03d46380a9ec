import type { Hono } from 'hono';
import type { AppContext } from '../../../src/app-context.js';
import { createTestContext } from '../http-test-context.js';

export const LOCATION_TOOL = {
  type: 'function',
  function: {
    name: 'get_location',
    description: "The user's location, read from their device",
    parameters: { type: 'object', properties: { precise: { type: 'boolean' } }, required: ['precise'], additionalProperties: false },
  },
};

export function post(app: Hono, path: string, body: unknown, signal?: AbortSignal) {
  return app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
}

export const locationCall = { id: 'call_loc', name: 'get_location', arguments: '{"precise":true}' };

/** The app context both runs suites start from: a short reconnect grace, so the replay cases wait little. */
export const openRunsTestContext = (): Promise<AppContext> => createTestContext({ RUN_RECONNECT_GRACE_MS: '1500' });
