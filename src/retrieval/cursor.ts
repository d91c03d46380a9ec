/** Keyset pagination cursor: the last row's exact creation time (as Postgres prints it) and id. */
export interface CursorPosition {
  createdAt: string;
  id: string;
}

export class InvalidCursorError extends Error {
  constructor() {
    super('cursor is not valid');
    this.name = 'InvalidCursorError';
  }
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

// As Postgres prints a timestamptz; validated so a forged cursor is a 400, not a SQL error.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `isId`: what an id of the paginated table looks like (UUIDs by default); agents have ids of
 * their callers' choosing, which only need to be text Postgres stores.
 */
export function decodeCursor(cursor: string, isId: (id: string) => boolean = (id) => UUID.test(id)): CursorPosition {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2) {
      const [createdAt, id] = value as unknown[];
      if (typeof createdAt === 'string' && typeof id === 'string' && isId(id) && TIMESTAMP.test(createdAt)) {
        return { createdAt, id };
      }
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError();
}
