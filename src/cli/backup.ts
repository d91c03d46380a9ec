/**
 * A snapshot of the embedded store (PGlite in DATA_DIR) to a file, with the server stopped:
 * `npm run backup -- <file>`. A PostgreSQL server is backed up with pg_dump instead.
 */
import { runBackupCli } from '../db/backup-cli.js';
import { ConfigError, loadConfig } from '../config/config.js';

async function main(): Promise<number> {
  const config = loadConfig();
  return runBackupCli(
    process.argv.slice(2),
    { databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR },
    {
      out: (line) => console.log(line),
      err: (line) => console.error(line),
    },
  );
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
