/**
 * Runs tasks per key within `max` slots, in the order they arrive, within this process: a task
 * takes `weight` slots (at most `max`, which runs it alone), and waits while they are taken or an
 * earlier task waits; tasks of different keys do not wait for each other. A task's failure is its
 * caller's alone. The map holds only keys with a task running or queued.
 */
export class KeyedConcurrencyLimit {
  private readonly lanes = new Map<string, { used: number; waiting: Array<{ weight: number; start: () => void }> }>();

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, not ${max}`);
  }

  async run<T>(key: string, task: () => Promise<T>, weight = 1): Promise<T> {
    const slots = Math.min(Math.max(1, Math.trunc(weight)), this.max);
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { used: 0, waiting: [] }));
    if (lane.waiting.length > 0 || lane.used + slots > this.max) {
      await new Promise<void>((start) => lane!.waiting.push({ weight: slots, start }));
    } else lane.used += slots;
    try {
      return await task();
    } finally {
      lane.used -= slots;
      // First come, first served: a task needing more slots than are free holds back those after it.
      while (lane.waiting.length > 0 && lane.used + lane.waiting[0]!.weight <= this.max) {
        const next = lane.waiting.shift()!;
        lane.used += next.weight;
        next.start();
      }
      if (lane.used === 0 && lane.waiting.length === 0) this.lanes.delete(key);
    }
  }

  /** Tasks of `key` waiting for their slots. */
  waiting(key: string): number {
    return this.lanes.get(key)?.waiting.length ?? 0;
  }

  /** Keys with a task running or queued. */
  get size(): number {
    return this.lanes.size;
  }
}
