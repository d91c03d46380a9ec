/** At most `limit` tasks at once; the rest wait in order, each handed the slot of one that ends. */
export function createLimiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const queue: Array<() => void> = [];
  return async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => queue.push(resolve));
    else running += 1;
    try {
      return await task();
    } finally {
      const waiter = queue.shift();
      if (waiter) waiter();
      else running -= 1;
    }
  };
}
