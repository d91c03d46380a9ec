import pg from 'pg';

/**
 * A pooled connection's named statements, least recently used first: what it keeps prepared on
 * the server, each parsed (and planned, as its plan cache decides) once per connection.
 */
export type PreparedOnConnection = Set<string>;

/** Runs `statement` prepared on `conn` (parsed on its first run there), as its most recently used. */
export async function runPrepared<Row>(
  conn: pg.PoolClient,
  prepared: PreparedOnConnection,
  statement: { name: string; text: string },
  values: unknown[],
): Promise<Row[]> {
  prepared.delete(statement.name);
  try {
    return (await conn.query({ name: statement.name, text: statement.text, values })).rows as Row[];
  } finally {
    // Prepared once the server parsed it, whether or not it then ran.
    if (parsedStatements(conn)[statement.name] !== undefined) prepared.add(statement.name);
  }
}

/**
 * Gives `conn` back to its pool, once the statements past `max` it keeps are let go (the least
 * recently used first); a connection that could not let them go is closed instead.
 */
export function releaseKeeping(conn: pg.PoolClient, prepared: PreparedOnConnection, max: number): void {
  if (prepared.size <= max) conn.release();
  else
    void deallocateOldest(conn, prepared, max).then(
      () => conn.release(),
      () => conn.release(true),
    );
}

/** A statement's own failure, which the server reports with a code and survives; not a lost or broken connection (class 08). */
export function isStatementError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08');
}

const parsedStatements = (conn: pg.PoolClient) => (conn as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements;

async function deallocateOldest(conn: pg.PoolClient, prepared: PreparedOnConnection, max: number): Promise<void> {
  while (prepared.size > max) {
    const oldest = prepared.values().next().value!;
    prepared.delete(oldest);
    await conn.query(`DEALLOCATE ${pg.escapeIdentifier(oldest)}`);
    // node-postgres remembers what it prepared, to skip the parse next time; it must forget this one.
    delete parsedStatements(conn)[oldest];
  }
}
