/**
 * Values made once for a key and then reused, at most `max` of them, the oldest made dropped
 * first: statements built from a filter's shape and values, where a process meets a few dozen
 * filters but a key could come from any of them.
 */
export function builtOnce<V>(max: number): (key: string, make: () => V) => V {
  const made = new Map<string, V>();
  return (key, make) => {
    let value = made.get(key);
    if (value === undefined) {
      value = make();
      if (made.size >= max) made.delete(made.keys().next().value!);
      made.set(key, value);
    }
    return value;
  };
}
