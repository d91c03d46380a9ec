import pg from 'pg';

/** An empty database `name` on the server `serverUrl` names (dropped first if it exists), and how to drop it. */
export async function freshServerDatabase(serverUrl: string | undefined, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!serverUrl) throw new Error('set BENCH_DATABASE_URL (or TEST_DATABASE_URL) for the pg driver');
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
