/**
 * Load on the HTTP API as operators meet it: `src/main.ts` in a child process on 127.0.0.1, a new
 * store for every case (embedded PGlite in a temporary directory, or a fresh database on the
 * PostgreSQL server BENCH_DATABASE_URL names), and clients in this process. Scenarios:
 *
 *  - `fresh`: a store used at once after a bulk load, by one client. 2,000 memories saved through
 *    `/v1/memories/batch`, then memory search (hybrid, a tag filter) at once; and 20,000 turns
 *    imported as conversations, then turn search at once. p50/p99 of each search.
 *  - `writers`: one client searching memories while 0, 4 and 16 others save memories: search
 *    p50/p99 and writes/s at each count.
 *  - `mix`: 32 clients for 60 s right after seeding 2,000 memories and 20 documents: 50% memory
 *    search with a tag, 25% saves, 15% chats (a scripted OpenAI-compatible model in this process,
 *    memory extraction on), 10% document search. req/s, p50/p99 per kind, failures (any status
 *    but 2xx, 429 and 503 counted apart), the pool's waits, and the server's resident memory idle
 *    before any data and after the load.
 *  - `kinds`: the older per-kind cases (memory search, knowledge search, memory save alone), by
 *    autocannon at BENCH_CONNECTIONS.
 *
 * BENCH_BASELINE_DIR names another checkout (with its node_modules) run the same way in the same
 * run, case by case, alternating with this one: the before/after comparison on this noisy machine.
 *
 *   npm run bench:load
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_BASELINE_DIR=/tmp/base npm run bench:load
 *   BENCH_SCENARIOS=mix BENCH_DRIVERS=pg BENCH_DURATION_S=20 npm run bench:load
 *
 * Also BENCH_MEMORIES, BENCH_TURNS (the fresh turn import; imported with BENCH_TURN_EMBEDDER,
 * by default `fake`, an instant embedder in this process, since the bundled model takes minutes
 * over 20k turns), BENCH_CLIENTS, BENCH_EMBEDDER (`fake` for every case), BENCH_LOG_LEVEL,
 * BENCH_SERVER_NODE_ARGS (flags for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`),
 * BENCH_HEAP_SNAPSHOT_DIR (a heap snapshot of the server at rest after the mix, written there).
 * Bounded: a watchdog stops everything, and every request has a 60 s timeout.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type ScriptedLlmServer, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { seededRandom } from '../../testkit/vector-fixtures.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';
import { rssBreakdown } from './lib/rss-breakdown.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'fresh,writers,mix').split(',');
const PG_URL = process.env.BENCH_DATABASE_URL;
const DRIVERS = (process.env.BENCH_DRIVERS ?? (PG_URL ? 'pglite,pg' : 'pglite')).split(',') as Driver[];
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 60);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 2000);
const TURNS = Number(process.env.BENCH_TURNS ?? 20_000);
const DOCUMENTS = Number(process.env.BENCH_DOCUMENTS ?? 20);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 200);
const WRITER_COUNTS = (process.env.BENCH_WRITERS ?? '0,4,16').split(',').map(Number);
const WRITERS_S = Number(process.env.BENCH_WRITERS_S ?? 15);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map(Number);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
// The server's port is read off its "memrag listening" line, which it logs at info.
if (!['trace', 'debug', 'info'].includes(LOG_LEVEL)) {
  throw new Error(`BENCH_LOG_LEVEL=${LOG_LEVEL} would hide the line the bench reads the server's port from: use info, debug or trace`);
}
const EMBEDDER = process.env.BENCH_EMBEDDER ?? 'configured';
const TURN_EMBEDDER = process.env.BENCH_TURN_EMBEDDER ?? 'fake';
// Flags for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (NODE_OPTIONS refuses --cpu-prof).
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
// A heap snapshot of the server at rest after the mix is written here (V8 collects garbage first).
const HEAP_SNAPSHOT_DIR = process.env.BENCH_HEAP_SNAPSHOT_DIR;
const WATCHDOG_MS = Number(process.env.BENCH_WATCHDOG_S ?? 3 * 3600) * 1000;

type Driver = 'pglite' | 'pg';

const random = seededRandom(42);
const WORDS = (
  'alice bob carol dave tea coffee green black oolong morning afternoon evening meeting project deadline budget ' +
  'report garden tomato rose basil travel paris tokyo lisbon train flight hotel birthday march april friend family ' +
  'doctor dentist appointment monday friday weekend concert piano guitar novel poetry recipe bread pasta curry ' +
  'running cycling swimming marathon invoice contract client server database index vector search memory agent ' +
  'prefers likes dislikes visited booked ordered wrote read played cooked planned cancelled moved started finished'
).split(' ');
const TAGS = WORDS.slice(0, 12);
const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]!).join(' ');
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Version {
  name: string;
  dir: string;
}

interface Server {
  child: ChildProcess;
  base: string;
  stop(): Promise<void>;
}

/** Starts `script` under tsx in `cwd`; resolves once `ready` finds what it waits for in a line of its output. */
async function startProcess(cwd: string, script: string, env: NodeJS.ProcessEnv, ready: (line: string) => string | undefined, nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const value = await new Promise<string>((resolveValue, reject) => {
    // Every line is read (and dropped), so a full pipe never stalls the child's logging.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const found = ready(line);
      if (found !== undefined) resolveValue(found);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
  });
  return { child, value };
}

let llm: ScriptedLlmServer | undefined;
let fakeEmbeddings: { child: ChildProcess; value: string } | undefined;

async function startServer(version: Version, driver: Driver, embedder: string): Promise<Server> {
  const { API_KEYS: _keys, DATABASE_URL: _url, ...inherited } = process.env;
  const dataDir = driver === 'pglite' ? mkdtempSync(join(os.tmpdir(), 'memrag-load-')) : undefined;
  const database = driver === 'pg' ? await freshServerDatabase(PG_URL, 'memrag_bench_load') : undefined;
  if (embedder === 'fake') fakeEmbeddings ??= await startProcess(repoRoot, 'scripts/bench/lib/fake-embeddings-process.ts', process.env, (line) => line);
  const { child, value } = await startProcess(
    version.dir,
    'src/main.ts',
    {
      // As `npm start` and the Docker image run it, unless the bench's own environment says otherwise.
      MALLOC_ARENA_MAX: '2',
      ...inherited,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL,
      RATE_LIMIT_PER_MINUTE: '0',
      LLM_BASE_URL: llm!.url,
      LLM_API_KEY: 'bench',
      LLM_MODEL: 'scripted',
      ...(database ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir! }),
      ...(embedder === 'fake'
        ? { EMBEDDING_PROVIDER: 'openai', EMBEDDING_BASE_URL: fakeEmbeddings!.value, EMBEDDING_API_KEY: 'bench', EMBEDDING_DIMENSIONS: '512' }
        : {}),
    },
    (line) => (line.includes('memrag listening') ? String((JSON.parse(line) as { port: number }).port) : undefined),
    [...SERVER_NODE_ARGS, ...(HEAP_SNAPSHOT_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_SNAPSHOT_DIR}`] : [])],
  );
  return {
    child,
    base: `http://127.0.0.1:${value}`,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
    },
  };
}

async function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
}

async function postOk(base: string, path: string, body: unknown): Promise<unknown> {
  const res = await post(base, path, body);
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

const memoryBody = (key: string) => ({ key, content: `${words(14)}.`, tags: [pick(TAGS)] });
const memorySearchBody = () => ({ query: words(4), topK: 10, tagsAny: [pick(TAGS)] });

/** Through `/v1/memories/batch`, 100 a request, as a client loading its data would. */
async function seedMemories(base: string): Promise<number> {
  const t0 = performance.now();
  await inParallel(Math.ceil(MEMORIES / 100), 2, async (b) => {
    const memories = Array.from({ length: Math.min(100, MEMORIES - b * 100) }, (_, i) => memoryBody(`seed-${b * 100 + i}`));
    await postOk(base, '/v1/memories/batch', { memories });
  });
  return performance.now() - t0;
}

async function seedDocuments(base: string): Promise<void> {
  await inParallel(DOCUMENTS, 2, async (i) => {
    const sections = Array.from({ length: 4 }, () => `## ${words(3)}\n\n${Array.from({ length: 5 }, () => `${words(18)}.`).join(' ')}`);
    await postOk(base, '/v1/documents', { title: `Guide ${i}: ${words(3)}`, text: `# ${words(4)}\n\n${sections.join('\n\n')}`, format: 'markdown' });
  });
}

/** 20 turns a conversation, a user per 10 conversations, as `/v1/conversations/import` takes them. */
async function seedTurns(base: string): Promise<number> {
  const perConversation = 20;
  const conversations = Math.ceil(TURNS / perConversation);
  const t0 = performance.now();
  await inParallel(conversations, 2, async (c) => {
    const start = Date.UTC(2025, 0, 1) + c * 86_400_000;
    const at = (m: number) => new Date(start + m * 60_000).toISOString();
    const messages = Array.from({ length: perConversation }, (_, t) => [
      { seq: t * 2 + 1, turn: t + 1, role: 'user', content: `${words(12)}?`, createdAt: at(t * 2) },
      { seq: t * 2 + 2, turn: t + 1, role: 'assistant', content: `${words(20)}.`, createdAt: at(t * 2 + 1) },
    ]).flat();
    await postOk(base, `/v1/conversations/import?userId=user-${Math.floor(c / 10)}`, {
      format: 'memrag.conversation',
      version: 1,
      conversation: { id: randomUUID(), agentId: 'default', title: words(4), createdAt: at(0), updatedAt: at(40) },
      messages,
    });
  });
  return performance.now() - t0;
}

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

function cpuTimes(pid: number | undefined): CpuTimes {
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
async function scrape(base: string): Promise<Scrape | undefined> {
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
async function settle(base: string): Promise<void> {
  for (const started = performance.now(); performance.now() - started < 120_000; ) {
    if ((await scrape(base))?.inFlight === 1) return;
    await sleep(250);
  }
  throw new Error('the server did not settle within 120 s');
}

const quantile = (sorted: readonly number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);
const round = (n: number) => Math.round(n * 10) / 10;

class Latencies {
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
async function runClients(clients: number, seconds: number, next: (client: number) => [string, () => Promise<Response>]): Promise<Latencies> {
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

async function searchAtOnce(base: string, path: string, body: () => unknown) {
  const latencies = new Latencies();
  for (let i = 0; i < SEARCHES; i++) await timed(latencies, 'search', () => post(base, path, body()));
  return latencies.summary('search');
}

type Row = Record<string, string | number>;

async function freshMemories(version: Version, driver: Driver): Promise<Row> {
  const server = await startServer(version, driver, EMBEDDER);
  try {
    const loadMs = await seedMemories(server.base);
    const s = await searchAtOnce(server.base, '/v1/memories/search', memorySearchBody);
    return { version: version.name, driver, case: `memory search after ${MEMORIES} batch-saved`, 'load s': round(loadMs / 1000), ...s };
  } finally {
    await server.stop();
  }
}

async function freshTurns(version: Version, driver: Driver): Promise<Row> {
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

async function writers(version: Version, driver: Driver): Promise<Row[]> {
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

async function mix(version: Version, driver: Driver): Promise<Row[]> {
  const server = await startServer(version, driver, EMBEDDER);
  try {
    await sleep(3000);
    const idle = await scrape(server.base);
    await seedMemories(server.base);
    await seedDocuments(server.base);
    const before = await scrape(server.base);
    const cpuBefore = cpuTimes(server.child.pid);
    let n = 0;
    const t0 = performance.now();
    const latencies = await runClients(CLIENTS, DURATION_S, () => {
      const r = random();
      if (r < 0.5) return ['memory search', () => post(server.base, '/v1/memories/search', memorySearchBody())];
      if (r < 0.75) return ['save', () => post(server.base, '/v1/memories', memoryBody(`mix-${n++}`))];
      if (r < 0.9) return ['chat', () => post(server.base, '/v1/chat', { message: `${words(8)}?`, userId: `user-${Math.floor(random() * 8)}` })];
      return ['document search', () => post(server.base, '/v1/search', { query: words(4), topK: 10 })];
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
    const kinds = ['memory search', 'save', 'chat', 'document search'].map((kind) => ({ version: version.name, driver, kind, ...latencies.summary(kind) }));
    return [head, ...kinds];
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

/** The per-kind cases by autocannon, one kind at a time at each connection count. */
async function kinds(version: Version, driver: Driver): Promise<Row[]> {
  const server = await startServer(version, driver, EMBEDDER);
  const rows: Row[] = [];
  try {
    await seedMemories(server.base);
    await seedDocuments(server.base);
    const cases = [
      { name: 'memory search', path: '/v1/memories/search', body: () => ({ query: words(4), topK: 10 }) },
      { name: 'knowledge search', path: '/v1/search', body: () => ({ query: words(4), topK: 10 }) },
      { name: 'memory save', path: '/v1/memories', body: (i: number) => memoryBody(`load-${i}`) },
    ];
    for (const spec of cases) {
      for (const connections of CONNECTIONS) {
        await settle(server.base);
        let i = 0;
        const result = await autocannon({
          url: server.base,
          connections,
          duration: Math.min(DURATION_S, 10),
          timeout: 60,
          requests: [
            {
              method: 'POST',
              path: spec.path,
              headers: { 'content-type': 'application/json' },
              setupRequest: (request) => ({ ...request, body: JSON.stringify(spec.body(i++)) }),
            },
          ],
        });
        rows.push({
          version: version.name,
          driver,
          case: spec.name,
          conns: connections,
          'req/s': Math.round(result.requests.average),
          p50: result.latency.p50,
          p99: result.latency.p99,
          'non-2xx': result.non2xx,
          errors: result.errors + result.timeouts,
        });
      }
    }
    return rows;
  } finally {
    await server.stop();
  }
}

async function main() {
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${WATCHDOG_MS / 1000} s; stopping`);
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  llm = await startScriptedLlmServer((request) =>
    // Extraction asks for JSON; an empty list of facts ends it after one call, as a quiet turn would.
    String(request.body.messages[0]?.content ?? '').includes('facts worth remembering')
      ? { kind: 'reply', content: '{"facts": []}', usage: { prompt_tokens: 300, completion_tokens: 5 } }
      : { kind: 'reply', content: `Noted: ${words(12)}.`, usage: { prompt_tokens: 600, completion_tokens: 20 } },
  );
  const versions: Version[] = [
    ...(BASELINE_DIR ? [{ name: 'before', dir: resolve(BASELINE_DIR) }] : []),
    { name: BASELINE_DIR ? 'after' : 'this', dir: repoRoot },
  ];
  console.log(
    `bench:load on ${os.availableParallelism()} cores (load average ${os.loadavg()[0]!.toFixed(1)}); scenarios ${SCENARIOS.join(', ')}; ` +
      `drivers ${DRIVERS.join(', ')}; versions ${versions.map((v) => `${v.name} (${v.dir})`).join(', ')}; embedder ${EMBEDDER}`,
  );
  try {
    const each = async (label: string, run: (version: Version, driver: Driver) => Promise<Row | Row[]>) => {
      const rows: Row[] = [];
      for (const driver of DRIVERS) {
        for (const version of versions) {
          const out = await run(version, driver);
          for (const row of [out].flat()) {
            console.log(`${label}: ${JSON.stringify(row)}`);
            rows.push(row);
          }
        }
      }
      // One table per shape of row (the mix has a summary row and a row per kind).
      const shapes = new Map<string, Row[]>();
      for (const row of rows) {
        const shape = Object.keys(row).join();
        shapes.set(shape, [...(shapes.get(shape) ?? []), row]);
      }
      for (const group of shapes.values()) console.table(group);
    };
    for (const scenario of SCENARIOS) {
      if (scenario === 'fresh') {
        await each('fresh', freshMemories);
        await each('fresh', freshTurns);
      } else if (scenario === 'writers') await each('writers', writers);
      else if (scenario === 'mix') await each('mix', mix);
      else if (scenario === 'kinds') await each('kinds', kinds);
      else throw new Error(`unknown scenario ${scenario}`);
    }
  } finally {
    fakeEmbeddings?.child.kill('SIGTERM');
    await llm.close();
    clearTimeout(watchdog);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
