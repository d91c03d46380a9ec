import { z } from 'zod';
import { AUDIT_ACTIONS } from '../../audit/audit-types.js';
import { queryInt, userIdSchema } from './memory-schemas.js';

/** The audit routes' inputs and replies. */

export const AUDIT_LIMITS = { pageDefault: 50, pageMax: 200, cursorMaxChars: 512 } as const;

export const listAuditQuery = z.strictObject({
  userId: userIdSchema.optional().meta({ description: 'Only the entries about this user.' }),
  action: z.enum(AUDIT_ACTIONS).optional().meta({ description: 'Only the entries of this action.' }),
  limit: queryInt(1, AUDIT_LIMITS.pageMax).default(AUDIT_LIMITS.pageDefault),
  cursor: z.string().max(AUDIT_LIMITS.cursorMaxChars).optional(),
});

const actorSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('api_key'),
      keyId: z.string().meta({ description: '`env:<n>` for the n-th `API_KEYS` entry, `key:<uuid>` for a stored key.' }),
      name: z.string().nullable().meta({ description: "A stored key's name; null for `API_KEYS` entries and keys created without one." }),
    }),
    z.object({ type: z.literal('open') }).meta({ description: 'The server ran without API keys.' }),
    z.object({ type: z.literal('command'), command: z.string() }).meta({ description: "An operator's command run on the database itself (`npm run keys`)." }),
  ])
  .meta({ id: 'AuditActor', description: 'Who acted.' });

export const auditEntrySchema = z
  .object({
    id: z.number().int().min(1),
    action: z.enum(AUDIT_ACTIONS),
    userId: z.string().nullable().meta({ description: 'The user the action was about.' }),
    actor: actorSchema,
    details: z.record(z.string(), z.unknown()).meta({
      description:
        '`user.erased`: `erased` (the counts the erasure answered), `originsMarked` (`memories` and `historyEvents` of other scopes whose origins in the ' +
        "user's conversations lost their quotes) and `completed` (false while it runs, and for good when it was cut short: a second erasure finishes it). " +
        'Deletions name what went: `memory.deleted` (`key`, `agentId`), `memories.deleted` (`agentId`, the tag filter, `deleted`: the count), ' +
        '`conversation.deleted`, `document.deleted` and `agent.deleted` (`id`). `tenant.exported` (`agentId`, `include`; the user exported, if one), `tenant.imported` (`format` and `lines`, with `jobId` for a job, ' +
        'or `imported`, `skipped` and `errors` counts when done at once), ' +
        '`key.created` and `key.revoked` (`keyId`, `prefix`, `scopes`). Never content.',
    }),
    at: z.iso.datetime().meta({ description: 'When the action started.' }),
  })
  .meta({ id: 'AuditEntry' });

export const auditPageSchema = z
  .object({
    items: z.array(auditEntrySchema),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last one.' }),
  })
  .meta({ id: 'AuditPage' });
