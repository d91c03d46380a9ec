import type { Context } from 'hono';
import type { AppContext } from '../app-context.js';
import type { AuditActor, NewAuditEntry } from '../audit/audit-types.js';
import type { ApiEnv } from './api-env.js';
import { tenantOf } from './tenant-context.js';

/** Who the request's key says acted: never its secret, only its id and name. */
export function actorOf(c: Context<ApiEnv>): AuditActor {
  const key = c.get('apiKey');
  return key ? { type: 'api_key', keyId: key.keyId, name: key.name || null } : { type: 'open' };
}

/**
 * Records what the request did in its tenant's audit log, with the request's key as who. Ids and
 * counts only: the caller passes no content, and the entry must never bring back what it records
 * the removal of.
 */
export function recordAudit(
  ctx: Pick<AppContext, 'audit'>,
  c: Context<ApiEnv>,
  entry: Omit<NewAuditEntry, 'actor' | 'userId'> & { userId?: string | null },
): Promise<number> {
  return ctx.audit.forTenant(tenantOf(c)).record({ ...entry, userId: entry.userId ?? null, actor: actorOf(c) });
}
