/** How a request's wait for a slot ended. */
export type SlotOutcome = 'admitted' | 'queue_full' | 'queue_timeout' | 'gone';

interface Waiter {
  admit(): void;
}

/**
 * A bounded set of slots with a bounded queue: at most `limit` holders, at most `maxQueued`
 * waiting in arrival order, none past its deadline, none whose client hung up. A slot freed while
 * someone waits passes to the first waiter as it is, so a request arriving then cannot take it
 * ahead of those already waiting.
 */
export class AdmissionSlots {
  private held = 0;
  private readonly queue: Waiter[] = [];

  constructor(
    readonly limit: number,
    readonly maxQueued: number,
  ) {}

  get inUse(): number {
    return this.held;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Waits for a slot until `deadline` (a `performance.now()` time). `first` puts the request at
   * the head of the queue, past its bound: for one that gave its slot back while it waited for
   * another (see tenant-admission.ts) and must not go behind requests that came after it.
   */
  async take(signal: AbortSignal, deadline: number, first = false): Promise<SlotOutcome> {
    if (this.held < this.limit) {
      this.held++;
      return 'admitted';
    }
    if (!first && this.queue.length >= this.maxQueued) return 'queue_full';
    if (signal.aborted) return 'gone';
    const waitMs = deadline - performance.now();
    if (waitMs <= 0) return 'queue_timeout';
    return new Promise<SlotOutcome>((resolve) => {
      const settle = (outcome: SlotOutcome) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const leave = (why: 'queue_timeout' | 'gone') => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        settle(why);
      };
      const timer = setTimeout(() => leave('queue_timeout'), waitMs);
      const onAbort = () => leave('gone');
      // The slot passes from the holder that leaves to this waiter: `held` stays as it is.
      const waiter: Waiter = { admit: () => settle('admitted') };
      if (first) this.queue.unshift(waiter);
      else this.queue.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next.admit();
    else this.held--;
  }
}
