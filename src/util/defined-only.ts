/**
 * `value` without its undefined properties, so that spreading it over defaults keeps the defaults
 * where nothing was given.
 */
export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
