/**
 * A configuration the server cannot start with, naming the variables to fix. In a module of its
 * own so that the modules whose settings config.ts composes (compaction's) can throw it without
 * importing config.ts back.
 */
export class ConfigError extends Error {
  constructor(
    readonly variables: string[],
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}
