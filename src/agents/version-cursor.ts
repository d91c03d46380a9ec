import { InvalidCursorError } from '../retrieval/cursor.js';

/**
 * Versions are numbered 1, 2, 3… and never renumbered, so the last version of a page is a stable
 * place to resume from, newest first. Opaque like the other cursors, so that clients do not build them.
 */
export function encodeVersionCursor(version: number): string {
  return Buffer.from(JSON.stringify(['v', version])).toString('base64url');
}

export function decodeVersionCursor(cursor: string): number {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && value[0] === 'v') {
      const version = value[1] as unknown;
      if (typeof version === 'number' && Number.isSafeInteger(version) && version >= 1 && version <= 2_147_483_647) return version;
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError();
}
