import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rssBreakdown } from '../rss-breakdown.js';
import { DURATION_S, CLIENTS, MEMORIES, TURNS, WRITER_COUNTS, WRITERS_S, EMBEDDER, TURN_EMBEDDER, HEAP_SNAPSHOT_DIR, type Driver } from './load-config.js';
import { type Version, type Server, startServer } from './load-server.js';
import { random, words, sleep, post, memoryBody, memorySearchBody, seedMemories, seedDocuments, seedTurns } from './load-client.js';
import { type Latencies, cpuTimes, scrape, settle, round, runClients, searchAtOnce } from './load-measures.js';

// The `fresh`, `writers` and `mix` scenarios, each a row (or rows) of figures per version and driver.
export type Row = Record<string, string | number>;

export async function freshMemories(version: Version, driver: Driver): Promise<Row> {
  const server = await startServer(version, driver, EMBEDDER);
  try {
    const loadMs = await seedMemories(server.base);
    const s = await searchAtOnce(server.base, '/v1/memories/search', memorySearchBody);
    return { version: version.name, driver, case: `memory search after ${MEMORIES} batch-saved`, 'load s': round(loadMs / 1000), ...s };
  } finally {
    await server.stop();
  }
}

export async function freshTurns(version: Version, driver: Driver): Promise<Row> {
  const server = await startServer(version, driver, TURN_EMBEDDER);
  try {
    const loadMs = await seedTurns(server.base);
    const s = await searchAtOnce(server.base, '/v1/turns/search', () => ({
      query: words(5),
      userId: `user-${Math.floor(random() * (TURNS / 200))}`,
      topK: 10,
    }));
    return { version: version.name, driver, case: `turn search after ${TURNS} imported`, 'load s': round(loadMs / 1000), ...s };
  } finally {
    await server.stop();
  }
}

export async function writers(version: Version, driver: Driver): Promise<Row[]> {
  const server = await startServer(version, driver, EMBEDDER);
  const rows: Row[] = [];
  try {
    await seedMemories(server.base);
    let n = 0;
    for (const count of WRITER_COUNTS) {
      await settle(server.base);
      const latencies = await runClients(1 + count, WRITERS_S, (client) =>
        client === 0
          ? ['search', () => post(server.base, '/v1/memories/search', memorySearchBody())]
          : ['save', () => post(server.base, '/v1/memories', memoryBody(`w-${n++}`))],
      );
      const save = latencies.summary('save');
      rows.push({ version: version.name, driver, writers: count, ...latencies.summary('search'), 'saves/s': round(save.n / WRITERS_S) });
    }
    return rows;
  } finally {
    await server.stop();
  }
}

/** The mix's kinds of request, each with its share of the mix: what `mix` picks from and `mixKinds` runs alone. */
function mixRequests(base: string): { kind: string; share: number; request: () => Promise<Response> }[] {
  let n = 0;
  return [
    { kind: 'memory search', share: 0.5, request: () => post(base, '/v1/memories/search', memorySearchBody()) },
    { kind: 'save', share: 0.25, request: () => post(base, '/v1/memories', memoryBody(`mix-${n++}`)) },
    { kind: 'chat', share: 0.15, request: () => post(base, '/v1/chat', { message: `${words(8)}?`, userId: `user-${Math.floor(random() * 8)}` }) },
    { kind: 'document search', share: 0.1, request: () => post(base, '/v1/search', { query: words(4), topK: 10 }) },
  ];
}

export async function mix(version: Version, driver: Driver): Promise<Row[]> {
  const server = await startServer(version, driver, EMBEDDER);
  try {
    await sleep(3000);
    const idle = await scrape(server.base);
    await seedMemories(server.base);
    await seedDocuments(server.base);
    const before = await scrape(server.base);
    const cpuBefore = cpuTimes(server.child.pid);
    const requests = mixRequests(server.base);
    const t0 = performance.now();
    const latencies = await runClients(CLIENTS, DURATION_S, () => {
      let r = random();
      const picked = requests.find(({ share }) => (r -= share) < 0) ?? requests[requests.length - 1]!;
      return [picked.kind, picked.request];
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpuAfter = cpuTimes(server.child.pid);
    const after = await scrape(server.base);
    await settle(server.base).catch(() => {});
    await sleep(3000);
    const rest = await scrape(server.base);
    const held = server.child.pid ? rssBreakdown(server.child.pid) : undefined;
    const live = HEAP_SNAPSHOT_DIR && server.child.pid ? await heapSnapshot(server) : undefined;
    const total = [...latencies.byKind.values()].reduce((s, k) => s + k.ms.length, 0);
    const failed = [...latencies.byKind.values()].reduce((s, k) => s + k.failed, 0);
    const shed = [...latencies.byKind.values()].reduce((s, k) => s + k.shed, 0);
    const waits = after && before ? after.poolWaits - before.poolWaits : NaN;
    const perRequest = (amount: number) => round(amount / Math.max(1, total));
    const head: Row = {
      version: version.name,
      driver,
      'req/s': round(total / seconds),
      failed,
      'shed (429/503)': shed,
      'pool waits': Number.isNaN(waits) || !after?.poolWaits ? 'n/a' : waits,
      'pool wait ms (mean)': !after?.poolWaits ? 'n/a' : round(((after.poolWaitSeconds - before!.poolWaitSeconds) / Math.max(1, waits)) * 1000),
      // The embedder as callers see it: calls of embed() and their wall time, waits included (a
      // worker may run several calls' texts as one model call).
      'embedded texts/req': after && before ? perRequest(after.embeddedTexts - before.embeddedTexts) : 'n/a',
      'embed calls/req': after && before ? perRequest(after.embedCalls - before.embedCalls) : 'n/a',
      'embed ms/call': after && before ? round(((after.embedSeconds - before.embedSeconds) / Math.max(1, after.embedCalls - before.embedCalls)) * 1000) : 'n/a',
      // CPU per request where it was spent; the machine has os.availableParallelism() x 1000 ms a second.
      'CPU ms/req server': perRequest(cpuAfter.server - cpuBefore.server),
      'of it main thread': perRequest(cpuAfter.serverMain - cpuBefore.serverMain),
      'CPU ms/req postgres': driver === 'pg' ? perRequest(cpuAfter.postgres - cpuBefore.postgres) : 'n/a',
      'CPU ms/req bench': perRequest(cpuAfter.bench - cpuBefore.bench),
      'RSS MB idle': Math.round(idle?.rssMb ?? NaN),
      'RSS MB after': Math.round(rest?.rssMb ?? NaN),
      'heap MB after': Math.round(rest?.heapMb ?? NaN),
      // Where the resident memory after the load is (rss-breakdown.ts): wasm memories (PGlite's,
      // each embedding worker's), malloc arenas, V8 heaps and other anonymous memory, files.
      'RSS MB wasm': held ? `${held.wasmMb} (${held.wasmMemoriesMb.join('+')})` : 'n/a',
      'RSS MB malloc': held?.mallocArenasMb ?? 'n/a',
      'RSS MB other anon': held?.otherAnonymousMb ?? 'n/a',
      'RSS MB files': held?.filesMb ?? 'n/a',
      ...(live ? { 'heap MB live': Math.round(live.heapMb), 'heap snapshot': live.file } : {}),
    };
    const kinds = requests.map(({ kind }) => ({ version: version.name, driver, kind, ...latencies.summary(kind) }));
    return [head, ...kinds];
  } finally {
    await server.stop();
  }
}

/**
 * Each kind of the mix alone, after the mix's seeding, by as many clients for half as long: what
 * one request of each costs where (CPU ms of the server, its main thread, PostgreSQL and the
 * bench), and so each kind's part of the mix's CPU (its share of requests times its cost).
 */
export async function mixKinds(version: Version, driver: Driver): Promise<Row[]> {
  const server = await startServer(version, driver, EMBEDDER);
  try {
    await seedMemories(server.base);
    await seedDocuments(server.base);
    const measured: {
      kind: string;
      share: number;
      seconds: number;
      summary: ReturnType<Latencies['summary']>;
      cpu: Record<'server' | 'main' | 'postgres' | 'bench', number>;
    }[] = [];
    // Saves last: run before the others, their ~2,000 new memories would double the corpus the
    // searches and chats of the mix (which adds a few hundred) read.
    const kinds = mixRequests(server.base).sort((a, b) => Number(a.kind === 'save') - Number(b.kind === 'save'));
    for (const { kind, share, request } of kinds) {
      await settle(server.base);
      const cpuBefore = cpuTimes(server.child.pid);
      const t0 = performance.now();
      const latencies = await runClients(CLIENTS, DURATION_S / 2, () => [kind, request]);
      const seconds = (performance.now() - t0) / 1000;
      const cpuAfter = cpuTimes(server.child.pid);
      const summary = latencies.summary(kind);
      const per = (amount: number) => amount / Math.max(1, summary.n);
      const cpu = {
        server: per(cpuAfter.server - cpuBefore.server),
        main: per(cpuAfter.serverMain - cpuBefore.serverMain),
        postgres: driver === 'pg' ? per(cpuAfter.postgres - cpuBefore.postgres) : 0,
        bench: per(cpuAfter.bench - cpuBefore.bench),
      };
      measured.push({ kind, share, seconds, summary, cpu });
    }
    const total = (m: (typeof measured)[number]) => m.cpu.server + m.cpu.postgres + m.cpu.bench;
    const mixCpu = measured.reduce((sum, m) => sum + m.share * total(m), 0);
    return measured.map((m) => ({
      version: version.name,
      driver,
      kind: m.kind,
      'req/s': round(m.summary.n / m.seconds),
      p50: m.summary.p50,
      p99: m.summary.p99,
      failed: m.summary.failed,
      shed: m.summary.shed,
      'CPU ms/req server': round(m.cpu.server),
      'of it main thread': round(m.cpu.main),
      'CPU ms/req postgres': driver === 'pg' ? round(m.cpu.postgres) : 'n/a',
      'CPU ms/req bench': round(m.cpu.bench),
      'share of the mix CPU': `${Math.round((100 * m.share * total(m)) / mixCpu)}%`,
    }));
  } finally {
    await server.stop();
  }
}

/** Asks the server for a heap snapshot and waits until it is written: the main thread's live heap after a full collection. */
async function heapSnapshot(server: Server): Promise<{ heapMb: number; file: string } | undefined> {
  const dir = HEAP_SNAPSHOT_DIR!;
  const before = new Set(readdirSync(dir));
  server.child.kill('SIGUSR2');
  for (let last = -1, started = performance.now(); performance.now() - started < 120_000; ) {
    await sleep(1000);
    const file = readdirSync(dir).find((name) => !before.has(name) && name.endsWith('.heapsnapshot'));
    if (!file) continue;
    const size = statSync(join(dir, file)).size;
    if (size > 0 && size === last) {
      const heapMb = (await scrape(server.base))?.heapMb;
      return heapMb === undefined ? undefined : { heapMb, file: join(dir, file) };
    }
    last = size;
  }
  return undefined;
}
