import { type DestinationStream, type Logger, pino } from 'pino';
import type { Config } from '../config/config.js';
import { currentRequestId } from './request-context.js';

export type { Logger };

/**
 * The process's structured logger: one JSON object per line on stdout (or `destination`, which
 * tests use to read the lines back). Lines written while a request is served carry its
 * `requestId`, taken from the request context rather than passed around.
 */
export function createLogger(level: Config['LOG_LEVEL'], destination?: DestinationStream): Logger {
  const options = {
    level,
    // Level names rather than pino's numbers: readable in `docker logs` and matched by name in log stores.
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: () => {
      const requestId = currentRequestId();
      return requestId === undefined ? {} : { requestId };
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
