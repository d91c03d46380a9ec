interface Waiting<I, R> {
  item: I;
  write: (items: readonly I[]) => Promise<R[]>;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: at most `writers` writes of one key run at once (default one), and the items that
 * arrive while they run go together in the next one (up to `maxItems`), so a burst of small writes
 * costs one transaction and one statement per table instead of one each. An item arriving when a
 * writer is free is written at once, alone: nobody waits for a group to fill.
 *
 * Each caller's promise settles with its own item's result once the write that carried it has
 * committed. A write of several items that fails is run again item by item, so that one bad item
 * fails only its own caller. Callers of one key pass equivalent `write`s: a group is written by
 * its first item's.
 */
export class GroupCommit<I, R> {
  private readonly lanes = new Map<string, { waiting: Waiting<I, R>[]; writers: number }>();

  constructor(
    private readonly maxItems: number,
    private readonly writers = 1,
  ) {}

  run(key: string, item: I, write: (items: readonly I[]) => Promise<R[]>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let lane = this.lanes.get(key);
      if (!lane) this.lanes.set(key, (lane = { waiting: [], writers: 0 }));
      lane.waiting.push({ item, write, resolve, reject });
      if (lane.writers < this.writers) {
        lane.writers++;
        void this.drain(key, lane);
      }
    });
  }

  /** Keys with a write running or waiting. */
  get size(): number {
    return this.lanes.size;
  }

  private async drain(key: string, lane: { waiting: Waiting<I, R>[]; writers: number }): Promise<void> {
    while (lane.waiting.length > 0) await this.commit(lane.waiting.splice(0, this.maxItems));
    if (--lane.writers === 0) this.lanes.delete(key);
  }

  private async commit(group: readonly Waiting<I, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await group[0]!.write(group.map((w) => w.item));
    } catch (error) {
      if (group.length === 1) {
        group[0]!.reject(error);
        return;
      }
      for (const w of group) await this.commit([w]);
      return;
    }
    group.forEach((w, i) => w.resolve(results[i]!));
  }
}
