import { readFileSync } from 'node:fs';

/**
 * Resident memory of a process by what holds it, read from /proc/<pid>/smaps (Linux; undefined
 * elsewhere). Anonymous mappings that touch each other are taken as one region, since mprotect
 * splits a reservation into an accessible head and an inaccessible tail (and a new region starts
 * where an accessible mapping follows an inaccessible one, as reservations laid end to end do):
 *
 * - `wasm`: regions of 1 GiB or more, which only WebAssembly memories reserve (V8 reserves 8 GiB
 *   and guard pages for each, and makes accessible what the module grew);
 * - `malloc arenas`: 64 MiB regions on a 64 MiB boundary, the heaps glibc gives threads other
 *   than the first, plus `[heap]`, the first thread's;
 * - `other anonymous`: V8's own heaps (JS objects, code) of every isolate, large malloc blocks
 *   (mmap'd), thread stacks;
 * - `files`: the binaries, shared libraries and native addons mapped in (stacks and the vDSO
 *   count as other anonymous).
 */
export interface RssBreakdown {
  wasmMb: number;
  /** The resident size of each WebAssembly memory that holds any, largest first. */
  wasmMemoriesMb: number[];
  mallocArenasMb: number;
  otherAnonymousMb: number;
  filesMb: number;
}

interface Mapping {
  start: bigint;
  end: bigint;
  /** No access: the reserved tail of a WebAssembly memory or a malloc arena. */
  inaccessible: boolean;
  path: string;
  rssKb: number;
}

const GIB = 1n << 30n;
const ARENA = 64n << 20n;

export function rssBreakdown(pid: number): RssBreakdown | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  const mappings: Mapping[] = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      mappings.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), inaccessible: head[3]!.startsWith('---'), path: head[4]!, rssKb: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && mappings.length > 0) mappings[mappings.length - 1]!.rssKb = Number(rss[1]);
  }
  const mb = (kb: number) => Math.round(kb / 1024);
  let files = 0;
  let arenas = 0;
  let other = 0;
  const wasm: number[] = [];
  let region: Mapping[] = [];
  const closeRegion = () => {
    if (region.length === 0) return;
    const start = region[0]!.start;
    const size = region[region.length - 1]!.end - start;
    const rssKb = region.reduce((sum, m) => sum + m.rssKb, 0);
    if (size >= GIB) wasm.push(rssKb);
    else if (size === ARENA && start % ARENA === 0n) arenas += rssKb;
    else other += rssKb;
    region = [];
  };
  for (const m of mappings) {
    if (m.path === '[heap]') {
      closeRegion();
      arenas += m.rssKb;
    } else if (m.path.startsWith('/')) {
      closeRegion();
      files += m.rssKb;
    } else if (m.path !== '') {
      closeRegion();
      other += m.rssKb;
    } else {
      const last = region[region.length - 1];
      // Reservations laid end to end are told apart where an accessible head follows a reserved tail.
      if (last && (last.end !== m.start || (last.inaccessible && !m.inaccessible))) closeRegion();
      region.push(m);
    }
  }
  closeRegion();
  return {
    wasmMb: mb(wasm.reduce((a, b) => a + b, 0)),
    wasmMemoriesMb: wasm
      .sort((a, b) => b - a)
      .map(mb)
      .filter((m) => m > 0),
    mallocArenasMb: mb(arenas),
    otherAnonymousMb: mb(other),
    filesMb: mb(files),
  };
}
