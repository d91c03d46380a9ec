// Postgres: insert or update on a table violates a foreign key constraint.
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Whether the error (or one it wraps: drizzle wraps the driver's) is a foreign key violation,
 * which a background write meets when the row it writes under was deleted meanwhile.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) return true;
  }
  return false;
}
