import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface IdleCollection {
  /** False where this runtime gave no collector (see `exposedGc`): nothing runs. */
  readonly running: boolean;
  stop(): void;
}

/** One collection: the committed heap before and after it, and how long the loop stood still for it. */
export interface IdleCollected {
  heapBefore: number;
  heapAfter: number;
  ms: number;
}

export interface IdleCollectionOptions {
  /** How often the event loop's utilization is read. Default 1,000 ms. */
  intervalMs?: number;
  /** The loop counts as quiet below this share of an interval spent working. Default 0.05. */
  quietUtilization?: number;
  /** Growth of the committed heap since the last collection that is worth a full one's pause. Default 32 MB. */
  minGrowthBytes?: number;
  onCollected?: (collected: IdleCollected) => void;
  /** Seams for tests: the collector, the committed heap, the loop's utilization since the last read. */
  gc?: () => void;
  heapBytes?: () => number;
  utilization?: () => number;
}

/**
 * Collects the garbage a burst of work left, once the event loop goes quiet after it. V8 keeps the
 * heap it grew under load committed until its next full collection, which an idle process never
 * reaches: after the mixed load the server held ~100 MB of garbage resident for as long as it
 * stayed idle (docs/benchmarks/load.md). Collecting pauses the loop (131–148 ms after the mix: a
 * request waiting on I/O meanwhile waits that much longer), so it runs only when the last interval
 * was quiet and the heap has grown by `minGrowthBytes` since the last one (or since it started):
 * at most once per quiet spell. What start-up leaves is mostly live (a collection of the server's
 * 92 MB heap at rest freed nothing and took 102 ms).
 */
export function startIdleCollection(options: IdleCollectionOptions = {}): IdleCollection {
  const gc = options.gc ?? exposedGc();
  if (!gc) return { running: false, stop: () => {} };
  const heapBytes = options.heapBytes ?? (() => getHeapStatistics().total_heap_size);
  const utilization = options.utilization ?? loopUtilization();
  const quiet = options.quietUtilization ?? 0.05;
  const minGrowth = options.minGrowthBytes ?? 32 * 1_048_576;
  let floor = heapBytes();
  const timer = setInterval(() => {
    const busy = utilization();
    const heapBefore = heapBytes();
    // V8's own collections may have shrunk the heap meanwhile: measure growth from there.
    if (heapBefore < floor) floor = heapBefore;
    if (busy >= quiet || heapBefore - floor < minGrowth) return;
    const started = performance.now();
    // The first collection finds what is live; the second moves the survivors of sparse pages
    // together, which lets those pages go. One alone leaves every page that kept an object
    // committed: after the mixed load, 191 of 242 MB for 71 MB live.
    gc();
    gc();
    floor = heapBytes();
    options.onCollected?.({ heapBefore, heapAfter: floor, ms: performance.now() - started });
  }, options.intervalMs ?? 1_000);
  // Housekeeping must not keep a process alive that has nothing else to do.
  timer.unref();
  return { running: true, stop: () => clearInterval(timer) };
}

/** A collection as a log line's fields, in MB and ms. */
export function idleCollectionLog(c: IdleCollected): { heapBeforeMb: number; heapAfterMb: number; pauseMs: number } {
  const mb = (bytes: number) => Math.round(bytes / 1_048_576);
  return { heapBeforeMb: mb(c.heapBefore), heapAfterMb: mb(c.heapAfter), pauseMs: Math.round(c.ms) };
}

/** The loop's share of time spent working since the previous call. */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return share;
  };
}

/**
 * V8's full collection, without `--expose-gc` on the command line (`npm start`, `node dist/…` and
 * the Docker image alike): the flag set at run time gives a new context a `gc` global, and is unset
 * again so that no context or worker thread made later gets one. Undefined where the runtime
 * refuses: housekeeping must not stop a server from starting.
 */
export function exposedGc(): (() => void) | undefined {
  const global = (globalThis as { gc?: unknown }).gc;
  if (typeof global === 'function') return global as () => void;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
