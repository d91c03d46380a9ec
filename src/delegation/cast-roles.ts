import type { AgentSettings } from '../agents/agent-config.js';
import { CAST_LIMITS, type CastMember, roleOf } from '../agents/cast-settings.js';

/** A lead's roles by name: hidden ones are found by name, only visible ones are listed. */
export interface CastRoles {
  find(role: string): CastMember | undefined;
  /** `- name: description` for each visible role, in the cast's order. */
  listing(): string;
  readonly names: readonly string[];
}

export function castRolesOf(settings: AgentSettings | null): CastRoles | undefined {
  const cast = settings?.cast ?? [];
  if (cast.length === 0) return undefined;
  const byRole = new Map(cast.map((member) => [roleOf(member), member]));
  return {
    find: (role) => byRole.get(role),
    listing: () =>
      cast
        .filter((member) => !member.hidden)
        .map((member) => `- ${roleOf(member)}: ${member.description}`)
        .join('\n'),
    names: [...byRole.keys()],
  };
}

/** The delegating agent's limits, its settings' or the defaults. */
export function delegationLimitsOf(settings: AgentSettings | null): { maxDepth: number; maxParallel: number } {
  return {
    maxDepth: settings?.delegation?.maxDepth ?? CAST_LIMITS.maxDepth.default,
    maxParallel: settings?.delegation?.maxParallel ?? CAST_LIMITS.maxParallel.default,
  };
}
