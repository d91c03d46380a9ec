/**
 * A configuration the server cannot start with, naming the variables to fix. In a module of its
 * own so that the checks made after parsing (compaction's) can throw it without loading the
 * environment's whole schema.
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
