interface Waiting<I, R> {
  item: I;
  write: (items: readonly I[]) => Promise<R[]>;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: writes of one key run one at a time, and the items that arrive while a write
 * runs go together in the next one (up to `maxItems`), so a burst of small writes costs one
 * transaction and one statement per table instead of one each. An item arriving when nothing
 * runs is written at once, alone: nobody waits for a group to fill.
 *
 * Each caller's promise settles with its own item's result once the write that carried it has
 * committed. A write of several items that fails is run again item by item, so that one bad item
 * fails only its own caller. Callers of one key pass equivalent `write`s: a group is written by
 * its first item's.
 */
export class GroupCommit<I, R> {
  private readonly lanes = new Map<string, Waiting<I, R>[]>();

  constructor(private readonly maxItems: number) {}

  run(key: string, item: I, write: (items: readonly I[]) => Promise<R[]>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const waiting = this.lanes.get(key);
      if (waiting) {
        waiting.push({ item, write, resolve, reject });
        return;
      }
      const lane: Waiting<I, R>[] = [{ item, write, resolve, reject }];
      this.lanes.set(key, lane);
      void this.drain(key, lane);
    });
  }

  /** Keys with a write running or waiting. */
  get size(): number {
    return this.lanes.size;
  }

  private async drain(key: string, lane: Waiting<I, R>[]): Promise<void> {
    while (lane.length > 0) await this.commit(lane.splice(0, this.maxItems));
    this.lanes.delete(key);
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
