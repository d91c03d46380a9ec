import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import { DEFAULT_NEW_KEY_SCOPES } from '../../auth/api-key-scopes.js';
import { type ApiKeyRecord, createApiKey, listApiKeys, revokeApiKey } from '../../auth/api-key-store.js';
import { actorOf } from '../audit-record.js';
import { notTheOperator } from '../operator-request.js';
import { HttpError, notFound } from '../../api/errors.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, jsonBody, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import { createKeyBody, createdKeySchema, keyIdParams, keyListSchema } from '../../api/schemas/key-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { idParam, parseWith, readJsonBody } from '../validate.js';

/**
 * `/v1/keys`: the tenant's API keys, managed by an admin key (`npm run keys` uses these routes
 * when a server holds the embedded store). A change holds in this process from the next request;
 * other servers on the same database see it within API_KEY_CACHE_MS.
 */
export function createKeyRoutes(ctx: AppContext): ApiRoutes {
  const routes = createApiRoutes();
  const db = ctx.database.db;

  const listKeysRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listApiKeys',
    tags: [TAGS.keys],
    summary: "List the tenant's API keys, revoked ones included, newest first",
    responses: { 200: jsonReply('Every key of the tenant: never a secret.', keyListSchema) },
  });
  defineRoute(routes, listKeysRoute, async (c) => {
    const items = await listApiKeys(db, { tenantId: tenantOf(c) });
    return c.json({ items: items.map(view) });
  });

  const revokeKeyRoute = createRoute({
    method: 'delete',
    path: '/{id}',
    operationId: 'revokeApiKey',
    tags: [TAGS.keys],
    summary: 'Revoke an API key',
    description:
      'Refused from the next request in this process, and within API_KEY_CACHE_MS on other servers. Kept in listings as revoked. ' +
      'Revoking the last key never opens the API. Recorded in the audit log (`key.revoked`).',
    request: { params: keyIdParams },
    responses: {
      200: jsonReply('The revoked key (revoked before, if it was).', keyListSchema.shape.items.element),
      404: notFoundResponse('API key of this tenant'),
    },
  });
  defineRoute(routes, revokeKeyRoute, async (c) => {
    const { id } = idParam(c, keyIdParams);
    const tenantId = tenantOf(c);
    const result = await db.transaction(async (tx) => {
      const revoked = await revokeApiKey(tx, id, { tenantId });
      if (revoked.status === 'revoked') {
        const { key } = revoked;
        await ctx.audit
          .forTenant(tenantId)
          .record({ action: 'key.revoked', userId: null, actor: actorOf(c), details: { keyId: key.id, prefix: key.prefix, scopes: key.scopes } }, tx);
      }
      return revoked;
    });
    ctx.auth.keysChanged();
    // An id is a uuid, and no prefix starts like one: the only answers are these three.
    if (result.status !== 'revoked' && result.status !== 'already_revoked') throw notFound(`No API key of this tenant has the id ${JSON.stringify(id)}`);
    return c.json(view(result.key));
  });

  // Declared last: see app.ts.
  const createKeyRoute = createRoute({
    method: 'post',
    path: '/',
    operationId: 'createApiKey',
    tags: [TAGS.keys],
    summary: 'Create an API key; its secret is in this reply only',
    description:
      "For the request's tenant, with the scopes asked for (default `read` and `write`). The first key stored turns authentication on: " +
      'from the next request every `/v1` call needs a key. Recorded in the audit log (`key.created`).',
    request: { body: jsonBody(createKeyBody, false) },
    responses: {
      201: jsonReply('The key, and its secret.', createdKeySchema),
      403: errorResponse({
        codes: ['forbidden'],
        description:
          'Another tenant was named while the server requires keys, a scope the calling key lacks was asked for, or a keyless server was asked by a web page (not a loopback JSON request).',
      }),
    },
  });
  defineRoute(routes, createKeyRoute, async (c) => {
    const caller = c.get('apiKey');
    // A keyless server serves every request as `default` and listens on loopback only: its caller is
    // the operator, once the request shows it is not a web page's.
    const stranger = caller === undefined ? notTheOperator(c) : undefined;
    if (stranger) throw new HttpError(403, 'forbidden', `The first key is made by the server's operator, not by ${stranger}.`);
    // No body at all asks for the defaults.
    const body = parseWith(createKeyBody, (await readJsonBody(c)) ?? {}, 'body');
    const own = tenantOf(c);
    const tenantId = body.tenantId ?? own;
    if (tenantId !== own && caller !== undefined) {
      throw new HttpError(403, 'forbidden', `A key creates keys for its own tenant only (${JSON.stringify(own)}), not for ${JSON.stringify(tenantId)}.`);
    }
    const scopes = body.scopes ?? DEFAULT_NEW_KEY_SCOPES;
    // A key gives no more than it holds: an admin-only key cannot mint one that reads.
    const beyond = caller === undefined ? [] : scopes.filter((scope) => !caller.scopes.includes(scope));
    if (beyond.length > 0) throw new HttpError(403, 'forbidden', `This key lacks the scope ${beyond.join(', ')}: it cannot give it to a new key.`);
    const created = await db.transaction(async (tx) => {
      const key = await createApiKey(tx, { tenantId, name: body.name ?? '', scopes });
      await ctx.audit
        .forTenant(tenantId)
        .record({ action: 'key.created', userId: null, actor: actorOf(c), details: { keyId: key.id, prefix: key.prefix, scopes: key.scopes } }, tx);
      return key;
    });
    ctx.auth.keysChanged();
    const { key, ...record } = created;
    c.header('Location', `/v1/keys/${record.id}`);
    return c.json({ key, apiKey: view(record) }, 201);
  });

  return routes;
}

function view(record: ApiKeyRecord) {
  return { ...record, createdAt: record.createdAt.toISOString(), revokedAt: record.revokedAt?.toISOString() ?? null };
}
