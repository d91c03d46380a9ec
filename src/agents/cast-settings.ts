import { z } from 'zod';
import { storable } from '../text/storable-string.js';

/** Bounds of an agent's cast (the roles it may delegate to) and of its delegations. */
export const CAST_LIMITS = {
  maxRoles: 16,
  descriptionMaxChars: 1_000,
  maxDepth: { min: 1, max: 4, default: 2 },
  maxParallel: { min: 1, max: 8, default: 4 },
} as const;

// As the API's `agentId` (a memory namespace): what a role's agent must be called to be found.
const agentIdOfRole = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\w.:@-]+$/, 'may contain only letters, digits, "_", ".", ":", "@" and "-"');

// The model names a role in `delegate`: kept to what reads as one word in its tool description.
const roleName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.-]+$/, 'may contain only letters, digits, "_", "." and "-"');

export const castMemberSchema = z.strictObject({
  agentId: agentIdOfRole.meta({
    description:
      "The agent the role runs as, with its own settings. An id with no stored agent is accepted (agents may be created in any order); it runs on the deployment's defaults, as `/v1/chat` does.",
  }),
  role: roleName.optional().meta({ description: 'What the lead calls it in `delegate` (default: `agentId`).' }),
  description: storable(z.string().trim().min(1).max(CAST_LIMITS.descriptionMaxChars)).meta({ description: 'What the role is for, shown to the lead.' }),
  hidden: z.boolean().optional().meta({ description: 'Dispatchable by name, but not listed in the tool description.' }),
});

export type CastMember = z.output<typeof castMemberSchema>;

/** The role a member answers to. */
export const roleOf = (member: CastMember): string => member.role ?? member.agentId;

export const castSchema = z
  .array(castMemberSchema)
  .max(CAST_LIMITS.maxRoles)
  .superRefine((cast, ctx) => {
    const seen = new Map<string, number>();
    cast.forEach((member, i) => {
      const role = roleOf(member);
      const first = seen.get(role);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'role'], message: `duplicates the role ${JSON.stringify(role)} of cast.${first}` });
      else seen.set(role, i);
    });
  })
  .meta({ description: `Roles the agent may delegate to with the built-in \`delegate\` tool (at most ${CAST_LIMITS.maxRoles}).` });

export const delegationSchema = z
  .strictObject({
    maxDepth: z
      .number()
      .int()
      .min(CAST_LIMITS.maxDepth.min)
      .max(CAST_LIMITS.maxDepth.max)
      .optional()
      .meta({ description: `Delegations below this agent's run at most (default ${CAST_LIMITS.maxDepth.default}).` }),
    maxParallel: z
      .number()
      .int()
      .min(CAST_LIMITS.maxParallel.min)
      .max(CAST_LIMITS.maxParallel.max)
      .optional()
      .meta({ description: `Delegations of one reply run at once at most (default ${CAST_LIMITS.maxParallel.default}).` }),
  })
  .meta({ description: 'Limits of the delegations this agent makes.' });

/** A cast that names the agent itself: a 400 at save time (the cycle rule would refuse every call of it). */
export function castIssues(agentId: string, cast: readonly CastMember[] | undefined): Array<{ path: string; message: string }> {
  return (cast ?? []).flatMap((member, i) =>
    member.agentId === agentId ? [{ path: `cast.${i}.agentId`, message: 'names the agent itself: an agent cannot be a role of its own cast' }] : [],
  );
}
