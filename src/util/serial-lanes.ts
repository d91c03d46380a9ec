/**
 * Runs tasks one at a time per key, in the order they arrive, within this process; tasks of
 * different keys run at once. A task's failure is its caller's alone: the next task of its key
 * runs regardless.
 */
export class SerialLanes {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.tails.set(key, tail);
    // The last task of a key takes the key with it: the map holds only keys with work queued.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a task running or queued. */
  get size(): number {
    return this.tails.size;
  }
}
