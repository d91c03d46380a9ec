import { ConfigError, loadConfig } from '../config/config.js';
import type { runBackupCli } from '../db/backup-cli.js';

/** Runs `npm run backup` or `npm run restore` (`command`) over the process's arguments and configuration, and exits with its code. */
export function runBackupCommand(command: typeof runBackupCli): void {
  const main = async (): Promise<number> => {
    const config = loadConfig();
    return command(
      process.argv.slice(2),
      { databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR },
      {
        out: (line) => console.log(line),
        err: (line) => console.error(line),
      },
    );
  };
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof ConfigError ? error.message : error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
