import { type AgentSettings, agentSettingsSchema } from './agent-config.js';
import type { AgentPatch } from './agent-store.js';

/**
 * The settings `patch` leaves: a field given replaces the current value whole (a nested object
 * too, so that a patch reads as the settings it results in), `null` removes it, `undefined`
 * leaves it. Parsed again, so the result is settings a reader accepts.
 */
export function applyAgentPatch(current: AgentSettings, patch: AgentPatch): AgentSettings {
  const next: Record<string, unknown> = { ...current };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete next[field];
    else next[field] = value;
  }
  return agentSettingsSchema.parse(next);
}

/** Equal settings: the same fields with the same values, in whatever key order they were written. */
export function sameSettings(a: AgentSettings, b: AgentSettings): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
