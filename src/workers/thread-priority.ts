import { readlinkSync } from 'node:fs';
import os from 'node:os';

/**
 * Gives the calling thread a niceness (0 to 19; higher yields the CPU to others), on Linux, where
 * a thread's priority is its own: the thread's id is the pid that setpriority takes. Elsewhere, or
 * where it is refused, nothing changes and the answer is false. A thread may only lower its
 * priority: an unprivileged process cannot raise it back.
 */
export function niceThisThread(niceness: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    os.setPriority(tid, niceness);
    return true;
  } catch {
    return false;
  }
}
