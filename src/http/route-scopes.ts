import type { ApiKeyScope } from '../auth/api-key-scopes.js';

/**
 * The scope each route needs, by method and OpenAPI path: `public` for the routes outside `/v1`
 * (health, docs, the console's page), which no key guards. `test/http/route-scopes.test.ts` fails
 * when a route of the OpenAPI document is missing here, so a new route cannot ship unscoped.
 * Searches are reads though they are POSTs; deleting one thing is a write (and audited);
 * what reaches across the tenant or keeps it accountable is admin.
 */
export const ROUTE_SCOPES = {
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  'GET /metrics': 'public',
  'GET /': 'public',
  'GET /openapi.json': 'public',
  'GET /docs': 'public',
  'GET /docs/{asset}': 'public',
  'GET /console': 'public',
  'GET /console/console.js': 'public',
  'GET /console/console.css': 'public',
  'GET /console/server.json': 'public',

  'POST /v1/memories/extract': 'write',
  'POST /v1/memories/search': 'read',
  'POST /v1/memories': 'write',
  'GET /v1/memories': 'read',
  'DELETE /v1/memories': 'write',
  'PUT /v1/memories/{key}': 'write',
  'PATCH /v1/memories/{key}': 'write',
  'GET /v1/memories/{key}': 'read',
  'DELETE /v1/memories/{key}': 'write',
  'POST /v1/memories/batch': 'write',
  'GET /v1/memories/{key}/history': 'read',
  'POST /v1/memories/{key}/approve': 'write',
  'GET /v1/tags': 'read',

  'POST /v1/chat': 'write',
  'POST /v1/chat/completions': 'write',
  'GET /v1/models': 'read',
  'GET /v1/models/{model}': 'read',

  'GET /v1/conversations': 'read',
  'POST /v1/conversations/import': 'write',
  'GET /v1/conversations/{id}': 'read',
  'DELETE /v1/conversations/{id}': 'write',
  'GET /v1/conversations/{id}/export': 'read',
  'GET /v1/conversations/{id}/attachments/{attachmentId}': 'read',
  'POST /v1/conversations/{id}/turns': 'write',
  'POST /v1/turns/search': 'read',

  'GET /v1/runs/{runId}': 'read',
  'POST /v1/runs/{runId}/tool-outputs': 'write',
  'POST /v1/runs/{runId}/approvals': 'write',
  'POST /v1/runs/{runId}/cancel': 'write',
  'POST /v1/runs/{runId}/messages': 'write',
  'POST /v1/runs/{runId}/pause': 'write',
  'POST /v1/runs/{runId}/resume': 'write',
  'GET /v1/runs/{runId}/events': 'read',

  'PUT /v1/blocks/{label}': 'write',
  'GET /v1/blocks/{label}': 'read',
  'GET /v1/blocks': 'read',
  'DELETE /v1/blocks/{label}': 'write',
  'GET /v1/blocks/{label}/history': 'read',
  'POST /v1/blocks/{label}/history/{eventId}/approve': 'write',
  'POST /v1/agents': 'write',
  'GET /v1/agents': 'read',
  'GET /v1/agents/{id}': 'read',
  'GET /v1/providers': 'read',
  'GET /v1/providers/{name}/models': 'read',
  'PATCH /v1/agents/{id}': 'write',
  'DELETE /v1/agents/{id}': 'admin',
  'GET /v1/agents/{id}/versions': 'read',
  'GET /v1/agents/{id}/versions/{version}': 'read',
  'POST /v1/workflows': 'write',
  'GET /v1/workflows': 'read',
  'GET /v1/workflows/{id}': 'read',
  'PATCH /v1/workflows/{id}': 'write',
  'DELETE /v1/workflows/{id}': 'write',
  'GET /v1/workflows/{id}/versions': 'read',
  'POST /v1/workflows/{id}/runs': 'write',

  'POST /v1/documents': 'write',
  'GET /v1/documents': 'read',
  'GET /v1/documents/{id}': 'read',
  'DELETE /v1/documents/{id}': 'write',
  'GET /v1/documents/{id}/chunks': 'read',
  'POST /v1/search': 'read',

  'GET /v1/jobs/{id}': 'read',
  'GET /v1/jobs': 'read',
  'POST /v1/jobs/{id}/cancel': 'write',
  'POST /v1/jobs/{id}/retry': 'write',
  'GET /v1/jobs/{id}/events': 'read',

  'DELETE /v1/users/{userId}': 'admin',
  'GET /v1/audit': 'admin',
  'GET /v1/export': 'admin',
  'POST /v1/import': 'admin',
  'POST /v1/keys': 'admin',
  'GET /v1/keys': 'admin',
  'DELETE /v1/keys/{id}': 'admin',
} as const satisfies Record<string, ApiKeyScope | 'public'>;

export type RouteKey = keyof typeof ROUTE_SCOPES;

interface CompiledRoute {
  method: string;
  pattern: RegExp;
  scope: ApiKeyScope | 'public';
  params: number;
}

// Literal segments before parameters: `/v1/memories/search` is the search, not the memory `search`.
const compiled: CompiledRoute[] = Object.entries(ROUTE_SCOPES)
  .map(([route, scope]) => {
    const [method, path] = route.split(' ') as [string, string];
    const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    return { method, pattern: new RegExp(`^${source}/?$`), scope, params: (path.match(/\{/g) ?? []).length };
  })
  .sort((a, b) => a.params - b.params);

/**
 * The scope a request needs. A path no route declares needs `admin`: a route missing from the
 * table stays closed to the keys that could not have used it, rather than open to all.
 */
export function scopeOfRequest(method: string, path: string): ApiKeyScope | 'public' {
  const asked = method === 'HEAD' ? 'GET' : method;
  return compiled.find((r) => r.method === asked && r.pattern.test(path))?.scope ?? 'admin';
}
