import { DEFAULT_TENANT_ID, tenantIdSchema } from '../tenancy/tenant-id.js';
import { hashApiKey } from './api-key-hash.js';

/** An `API_KEYS` entry as the server keeps it: the key's hash, never the key. */
export interface EnvApiKey {
  tenantId: string;
  keyHash: string;
}

/**
 * Parses `API_KEYS`: comma-separated entries, each `tenant:key` or a bare `key` (tenant
 * `default`). Tenant ids have no ":", so an entry splits at its first colon and the key may
 * contain more. Problems are returned, not thrown, for the configuration to report by variable.
 */
export function parseEnvApiKeys(value: string | undefined): { keys: EnvApiKey[]; problems: string[] } {
  const keys: EnvApiKey[] = [];
  const problems: string[] = [];
  const entries = (value ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  entries.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    const tenantId = colon === -1 ? DEFAULT_TENANT_ID : entry.slice(0, colon).trim();
    const key = colon === -1 ? entry : entry.slice(colon + 1).trim();
    // The message names the entry by position: its text is a secret.
    const tenant = tenantIdSchema.safeParse(tenantId);
    if (tenantId === '') problems.push(`entry ${i + 1}: the tenant before ":" is empty`);
    else if (!tenant.success) problems.push(`entry ${i + 1}: the tenant ${tenant.error.issues[0]?.message ?? 'is invalid'}`);
    else if (key === '') problems.push(`entry ${i + 1}: the key is empty (expected tenant:key or key)`);
    else keys.push({ tenantId, keyHash: hashApiKey(key) });
  });
  return { keys, problems };
}
