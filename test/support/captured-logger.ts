import type { Config } from '../../src/config/config.js';
import { type Logger, createLogger } from '../../src/observability/logger.js';

// Log lines are JSON objects of any shape; tests read the fields they expect.
export type LogLine = Record<string, any>;

/** A real pino logger (the app's own configuration) whose lines land in `lines`, parsed. */
export function createCapturedLogger(level: Config['LOG_LEVEL'] = 'debug'): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = createLogger(level, {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
    },
  });
  return { logger, lines };
}
