import { createHash } from 'node:crypto';

/**
 * The stored form of a key: its sha256, hex. Not bcrypt or argon2, on purpose: those slow hashes
 * protect low-entropy secrets (passwords) against guessing, but a generated key carries 256
 * random bits, so a fast hash is already beyond brute force; a slow hash would only cost tens of
 * milliseconds of CPU on every request. And a salted hash cannot be looked up, while this one is
 * found by a unique index in one query.
 *
 * Here rather than in src/auth because the configuration hashes API_KEYS as it reads them, and
 * config sits under every feature; auth's key store and authenticator use it through
 * src/auth/api-key-secret.ts.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
