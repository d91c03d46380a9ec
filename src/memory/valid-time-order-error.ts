/**
 * A write would leave a memory's valid time ending before it begins (a patch of one bound against
 * the stored other): such a fact would never hold, and every read would miss it.
 */
export class ValidTimeOrderError extends Error {
  readonly field = 'validUntil';
  constructor(validFrom: Date, validUntil: Date) {
    super(`must be after validFrom (${validFrom.toISOString()}); got ${validUntil.toISOString()}`);
    this.name = 'ValidTimeOrderError';
  }
}
