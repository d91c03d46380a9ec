import { createHash, randomBytes } from 'node:crypto';

/** Generated keys start with this, so a leaked one is recognisable (secret scanners, logs). */
export const API_KEY_PREFIX = 'mrk_';

/** Characters of the random part shown as the key's prefix: enough to tell keys apart, far too few to use one. */
const PREFIX_RANDOM_CHARS = 8;

/**
 * The stored form of a key: its sha256, hex. Not bcrypt or argon2, on purpose: those slow hashes
 * protect low-entropy secrets (passwords) against guessing, but a generated key carries 256
 * random bits, so a fast hash is already beyond brute force; a slow hash would only cost tens of
 * milliseconds of CPU on every request. And a salted hash cannot be looked up, while this one is
 * found by a unique index in one query.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

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
