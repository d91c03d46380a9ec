import { randomBytes } from 'node:crypto';

/** Generated keys start with this, so a leaked one is recognisable (secret scanners, logs). */
export const API_KEY_PREFIX = 'mrk_';

/** Characters of the random part shown as the key's prefix: enough to tell keys apart, far too few to use one. */
const PREFIX_RANDOM_CHARS = 8;

// The stored form of a key (and why sha256, not a slow hash) is in src/config/api-key-hash.ts: the
// configuration hashes API_KEYS as it reads them.
export { hashApiKey } from '../config/api-key-hash.js';

export interface GeneratedApiKey {
  /** Shown once, at creation; only its hash is stored. */
  key: string;
  /** The key's first characters, stored in clear to name it in listings and revocations. */
  prefix: string;
}

/** A new key: `mrk_` and 32 random bytes in base64url (43 characters). */
export function generateApiKey(): GeneratedApiKey {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, API_KEY_PREFIX.length + PREFIX_RANDOM_CHARS) };
}
