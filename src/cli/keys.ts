/**
 * API keys in the database (see src/auth): `npm run keys -- create --tenant acme [--name ci]`,
 * `npm run keys -- list`, `npm run keys -- revoke <id|prefix>`. Uses DATABASE_URL, or the
 * embedded PGlite store in DATA_DIR.
 */
import { runKeysCli } from '../auth/keys-cli.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { openDatabase } from '../db/database.js';

async function main(): Promise<number> {
  const config = loadConfig();
  if (!config.DATABASE_URL) {
    // PGlite takes no lock on its directory: a second process writing it beside a server corrupts it.
    console.error(`Using the embedded store in ${config.DATA_DIR}: no memrag server may be running on it meanwhile.`);
  }
  const database = await openDatabase(config.DATABASE_URL ? { url: config.DATABASE_URL } : { dataDir: config.DATA_DIR });
  try {
    return await runKeysCli(process.argv.slice(2), database.db, { out: (line) => console.log(line), err: (line) => console.error(line) });
  } finally {
    await database.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
