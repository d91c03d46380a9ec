import { readFileSync, readdirSync } from 'node:fs';
import { SEARCHES } from './load-config.js';
import { sleep, post } from './load-client.js';

// What a case measures: the server's CPU and /metrics, and the clients' latencies.
interface Scrape {
  rssMb: number;
  heapMb: number;
  inFlight: number;
  poolWaitSeconds: number;
  poolWaits: number;
  shed: number;
  embedCalls: number;
  embedSeconds: number;
  embeddedTexts: number;
}

/**
 * CPU time spent so far (ms, user + system, from /proc; Linux only, NaN elsewhere): the server
 * process with all its threads, its main thread alone (the event loop: HTTP, SQL building, PGlite),
 * every PostgreSQL process on this machine (backends that ended during the run are missed), and
 * this process (the clients, the scripted LLM). Ticks are taken as 1/100 s, Linux's USER_HZ.
 */
interface CpuTimes {
  server: number;
  serverMain: number;
  postgres: number;
  bench: number;
}

export function cpuTimes(pid: number | undefined): CpuTimes {
  const ticks = (statPath: string) => {
    try {
      // Fields after the command name (which may itself hold ') '): utime and stime are the 12th and 13th.
      const stat = readFileSync(statPath, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      return Number.NaN;
    }
  };
  let postgres = 0;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        // A backend that ended between the two reads counts as nothing rather than NaN.
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') postgres += ticks(`/proc/${entry}/stat`) || 0;
      } catch {
        // The process ended while the list was read.
      }
    }
  } catch {
    postgres = Number.NaN;
  }
  const own = process.cpuUsage();
  return {
    server: pid ? ticks(`/proc/${pid}/stat`) : Number.NaN,
    serverMain: pid ? ticks(`/proc/${pid}/task/${pid}/stat`) : Number.NaN,
    postgres,
    bench: (own.user + own.system) / 1000,
  };
}

/** The server's own view of itself, from `/metrics`. */
export async function scrape(base: string): Promise<Scrape | undefined> {
  try {
    const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    // Unlabelled series, or the sum over every label set of a labelled one.
    const value = (name: string) => [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
    return {
      rssMb: value('process_resident_memory_bytes') / 1_048_576,
      heapMb: value('nodejs_heap_size_used_bytes') / 1_048_576,
      inFlight: value('memrag_http_requests_in_flight'),
      poolWaitSeconds: value('memrag_db_pool_wait_seconds_sum'),
      poolWaits: value('memrag_db_pool_wait_seconds_count'),
      shed: value('memrag_http_requests_shed_total'),
      embedCalls: value('memrag_embedding_duration_seconds_count'),
      embedSeconds: value('memrag_embedding_duration_seconds_sum'),
      embeddedTexts: value('memrag_embedded_texts_total'),
    };
  } catch {
    return undefined;
  }
}

/** Until only the scrape itself is in flight: a measurement must not pay for the previous one's queue. */
export async function settle(base: string): Promise<void> {
  for (const started = performance.now(); performance.now() - started < 120_000; ) {
    if ((await scrape(base))?.inFlight === 1) return;
    await sleep(250);
  }
  throw new Error('the server did not settle within 120 s');
}

const quantile = (sorted: readonly number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);
export const round = (n: number) => Math.round(n * 10) / 10;

export class Latencies {
  readonly byKind = new Map<string, { ms: number[]; failed: number; shed: number }>();
  record(kind: string, ms: number, status: number): void {
    let k = this.byKind.get(kind);
    if (!k) this.byKind.set(kind, (k = { ms: [], failed: 0, shed: 0 }));
    if (status >= 200 && status < 300) k.ms.push(ms);
    else if (status === 429 || status === 503) k.shed++;
    else k.failed++;
  }
  summary(kind: string) {
    const k = this.byKind.get(kind);
    const sorted = [...(k?.ms ?? [])].sort((a, b) => a - b);
    return { n: sorted.length, p50: round(quantile(sorted, 0.5)), p99: round(quantile(sorted, 0.99)), failed: k?.failed ?? 0, shed: k?.shed ?? 0 };
  }
}

/** One request of `kind`; its latency and status go to `into`. */
async function timed(into: Latencies, kind: string, request: () => Promise<Response>): Promise<void> {
  const t0 = performance.now();
  let status = 0;
  try {
    const res = await request();
    status = res.status;
    await res.arrayBuffer();
  } catch {
    status = 0;
  }
  into.record(kind, performance.now() - t0, status);
}

/** Clients in closed loops until `seconds` pass, each picking its next request with `next`. */
export async function runClients(clients: number, seconds: number, next: (client: number) => [string, () => Promise<Response>]): Promise<Latencies> {
  const latencies = new Latencies();
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < until) {
        const [kind, request] = next(client);
        await timed(latencies, kind, request);
      }
    }),
  );
  return latencies;
}

export async function searchAtOnce(base: string, path: string, body: () => unknown) {
  const latencies = new Latencies();
  for (let i = 0; i < SEARCHES; i++) await timed(latencies, 'search', () => post(base, path, body()));
  return latencies.summary('search');
}
