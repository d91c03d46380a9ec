import { z } from 'zod';

/**
 * What a key may do. `read`: every read of the tenant's data. `write`: saves, deletions of
 * single things, chats and runs (a chat stores its turns). `admin`: what reaches across the
 * tenant or is kept for accountability: a user's erasure, the audit log, export, import, key
 * management and agent deletion. Each scope stands alone: `admin` does not imply `read`.
 */
export const API_KEY_SCOPES = ['read', 'write', 'admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** `API_KEYS` entries and keys stored before scopes existed. */
export const ALL_SCOPES: readonly ApiKeyScope[] = API_KEY_SCOPES;

/**
 * `npm run keys -- create` and `POST /v1/keys` without scopes: a key for an application, which
 * reads and writes but cannot erase users, export the tenant or make more keys. An admin key is
 * asked for by name.
 */
export const DEFAULT_NEW_KEY_SCOPES: readonly ApiKeyScope[] = ['read', 'write'];

export const apiKeyScopeSchema = z.enum(API_KEY_SCOPES);

/** One or more scopes, each once, kept in the order of `API_KEY_SCOPES`. */
export const apiKeyScopesSchema = z
  .array(apiKeyScopeSchema)
  .min(1)
  .max(API_KEY_SCOPES.length)
  .refine((scopes) => new Set(scopes).size === scopes.length, 'each scope at most once')
  .transform(normalizeScopes);

export function normalizeScopes(scopes: readonly ApiKeyScope[]): ApiKeyScope[] {
  return API_KEY_SCOPES.filter((s) => scopes.includes(s));
}

/** `--scopes read,write` as the CLI reads it: the scopes, or a problem naming what is wrong. */
export function parseScopeList(value: string): { scopes: ApiKeyScope[] } | { problem: string } {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) return { problem: `--scopes needs one or more of ${API_KEY_SCOPES.join(', ')}` };
  const unknown = names.filter((n) => !(API_KEY_SCOPES as readonly string[]).includes(n));
  if (unknown.length > 0)
    return { problem: `--scopes: unknown scope ${unknown.map((u) => JSON.stringify(u)).join(', ')} (known: ${API_KEY_SCOPES.join(', ')})` };
  return { scopes: normalizeScopes(names as ApiKeyScope[]) };
}

/** Stored scopes as read back: anything unknown (a newer server's) grants nothing here. */
export function storedScopes(values: readonly string[]): ApiKeyScope[] {
  return API_KEY_SCOPES.filter((s) => values.includes(s));
}
