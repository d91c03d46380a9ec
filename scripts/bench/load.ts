/**
 * Load on the HTTP API as operators run it: `src/main.ts` in a child process on 127.0.0.1
 * (embedded PGlite in a temporary directory, or BENCH_DATABASE_URL; the configured embedder,
 * by default the bundled model in a worker pool sized to the cores), driven by autocannon from
 * this process. For memory search, knowledge search (`POST /v1/search`, over a few ingested
 * documents) and memory save, at each connection count: requests/s, latency p50/p99, and the
 * server's resident memory and heap under load, read from its own `/metrics`.
 *
 * The mean time of an embed call during each case (from the same metrics) shows how much of the
 * latency is the model's. BENCH_EMBEDDER=fake swaps the model for an OpenAI-compatible endpoint
 * in this process that answers at once, which leaves the cost of the server itself: HTTP,
 * validation, SQL, logging.
 *
 * Bounded: BENCH_DURATION_S per case (default 10), a fixed seed, and a watchdog. Between cases it
 * waits for the server to finish the requests the previous case left queued.
 *
 *   npm run bench:load
 *   BENCH_DURATION_S=5 BENCH_CONNECTIONS=10,50,100 BENCH_MEMORIES=2000 npm run bench:load
 *   BENCH_EMBEDDER=fake BENCH_DATABASE_URL=postgres://… npm run bench:load
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { seededRandom } from '../../testkit/vector-fixtures.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map(Number);
const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 500);
const DOCUMENTS = Number(process.env.BENCH_DOCUMENTS ?? 20);
const DATABASE_URL = process.env.BENCH_DATABASE_URL;
// Access logs on, as in production: their cost is part of the figure.
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const EMBEDDER = process.env.BENCH_EMBEDDER ?? 'configured';

// Seeding and every case, with room to spare; past it something hangs, and the bench says so.
const WATCHDOG_MS = (10 * 60 + CONNECTIONS.length * 3 * (DURATION_S + 130)) * 1000;

const random = seededRandom(42);
const WORDS = (
  'alice bob carol dave tea coffee green black oolong morning afternoon evening meeting project deadline budget ' +
  'report garden tomato rose basil travel paris tokyo lisbon train flight hotel birthday march april friend family ' +
  'doctor dentist appointment monday friday weekend concert piano guitar novel poetry recipe bread pasta curry ' +
  'running cycling swimming marathon invoice contract client server database index vector search memory agent ' +
  'prefers likes dislikes visited booked ordered wrote read played cooked planned cancelled moved started finished'
).split(' ');
const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]!).join(' ');

interface Server {
  child: ChildProcess;
  base: string;
}

/** Starts `script` under tsx; resolves once `ready` finds what it waits for in a line of its output. */
async function startProcess(
  script: string,
  env: NodeJS.ProcessEnv,
  ready: (line: string) => string | undefined,
): Promise<{ child: ChildProcess; value: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'inherit'] });
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

async function startServer(dataDir: string | undefined, fakeEmbeddingsUrl: string | undefined): Promise<Server> {
  const { API_KEYS: _keys, DATABASE_URL: _url, ...inherited } = process.env;
  const { child, value } = await startProcess(
    'src/main.ts',
    {
      ...inherited,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL,
      RATE_LIMIT_PER_MINUTE: '0',
      ...(DATABASE_URL ? { DATABASE_URL } : { DATA_DIR: dataDir! }),
      ...(fakeEmbeddingsUrl
        ? { EMBEDDING_PROVIDER: 'openai', EMBEDDING_BASE_URL: fakeEmbeddingsUrl, EMBEDDING_API_KEY: 'bench', EMBEDDING_DIMENSIONS: '512' }
        : {}),
    },
    (line) => (line.includes('memrag listening') ? String((JSON.parse(line) as { port: number }).port) : undefined),
  );
  return { child, base: `http://127.0.0.1:${value}` };
}

async function post(base: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

async function seed(base: string): Promise<void> {
  const t0 = performance.now();
  await inParallel(MEMORIES, 8, (i) => post(base, '/v1/memories', { key: `seed-${i}`, content: `${words(14)}.`, tags: [WORDS[i % 12]!] }));
  const t1 = performance.now();
  await inParallel(DOCUMENTS, 2, (i) => {
    const sections = Array.from({ length: 4 }, () => `## ${words(3)}\n\n${Array.from({ length: 5 }, () => `${words(18)}.`).join(' ')}`);
    return post(base, '/v1/documents', { title: `Guide ${i}: ${words(3)}`, text: `# ${words(4)}\n\n${sections.join('\n\n')}`, format: 'markdown' });
  });
  const t2 = performance.now();
  console.log(`seeded ${MEMORIES} memories in ${((t1 - t0) / 1000).toFixed(1)} s, ${DOCUMENTS} documents in ${((t2 - t1) / 1000).toFixed(1)} s`);
}

interface Scrape {
  rssMb: number;
  heapMb: number;
  inFlight: number;
  embedSeconds: number;
  embedCalls: number;
}

/** The server's own view of itself, from `/metrics`. */
async function scrape(base: string): Promise<Scrape | undefined> {
  try {
    const text = await (await fetch(`${base}/metrics`)).text();
    // Unlabelled series, or the sum over every label set of a labelled one.
    const value = (name: string) => [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
    return {
      rssMb: value('process_resident_memory_bytes') / 1_048_576,
      heapMb: value('nodejs_heap_size_used_bytes') / 1_048_576,
      inFlight: value('memrag_http_requests_in_flight'),
      embedSeconds: value('memrag_embedding_duration_seconds_sum'),
      embedCalls: value('memrag_embedding_duration_seconds_count'),
    };
  } catch {
    return undefined;
  }
}

/** Until only the scrape itself is in flight: a case must not pay for its predecessor's queue. */
async function settle(base: string): Promise<void> {
  for (const started = performance.now(); performance.now() - started < 120_000; ) {
    if ((await scrape(base))?.inFlight === 1) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the server did not settle within 120 s');
}

interface Case {
  name: string;
  path: string;
  /** A new body per request: distinct queries, and distinct keys so every save embeds and writes. */
  body: (n: number) => unknown;
}

const CASES: Case[] = [
  { name: 'memory search', path: '/v1/memories/search', body: () => ({ query: words(4), topK: 10 }) },
  { name: 'knowledge search', path: '/v1/search', body: () => ({ query: words(4), topK: 10 }) },
  { name: 'memory save', path: '/v1/memories', body: (n) => ({ key: `load-${n}`, content: `${words(14)}.`, tags: ['load'] }) },
];

async function runCase(base: string, spec: Case, connections: number) {
  let n = 0;
  await settle(base);
  const before = await scrape(base);
  const samples: Scrape[] = [];
  const sampler = setInterval(() => {
    void scrape(base).then((s) => s && samples.push(s));
  }, 1000);
  const result = await autocannon({
    url: base,
    connections,
    duration: DURATION_S,
    // Past autocannon's default of 10 s a slow reply would count as an error, not as latency.
    timeout: 60,
    requests: [
      {
        method: 'POST',
        path: spec.path,
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: JSON.stringify(spec.body(n++)) }),
      },
    ],
  });
  clearInterval(sampler);
  const after = await scrape(base);
  const max = (key: 'rssMb' | 'heapMb') => (samples.length ? Math.max(...samples.map((s) => s[key])) : NaN);
  const embedMs = before && after ? ((after.embedSeconds - before.embedSeconds) / Math.max(1, after.embedCalls - before.embedCalls)) * 1000 : NaN;
  return {
    case: spec.name,
    conns: connections,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    'max ms': result.latency.max,
    requests: result.requests.total,
    'non-2xx': result.non2xx,
    errors: result.errors + result.timeouts,
    'embed ms (mean)': Math.round(embedMs * 10) / 10,
    'RSS MB (max)': Math.round(max('rssMb')),
    'heap MB (max)': Math.round(max('heapMb')),
  };
}

async function main() {
  const dataDir = DATABASE_URL ? undefined : mkdtempSync(join(os.tmpdir(), 'memrag-load-'));
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${WATCHDOG_MS / 1000} s; stopping`);
    server?.child.kill('SIGKILL');
    fakeEmbeddings?.child.kill('SIGKILL');
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  let server: Server | undefined;
  let fakeEmbeddings: { child: ChildProcess; value: string } | undefined;
  try {
    if (EMBEDDER === 'fake') fakeEmbeddings = await startProcess('scripts/bench/lib/fake-embeddings-process.ts', process.env, (line) => line);
    server = await startServer(dataDir, fakeEmbeddings?.value);
    console.log(
      `server ${server.base} (${DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, embedder ${fakeEmbeddings ? 'fake (instant)' : 'as configured'}, ` +
        `${os.availableParallelism()} cores, load average ${os.loadavg()[0]!.toFixed(1)}, LOG_LEVEL=${LOG_LEVEL}); ` +
        `${DURATION_S} s per case at ${CONNECTIONS.join(', ')} connections`,
    );
    await seed(server.base);
    const idle = await scrape(server.base);
    console.log(`memory after seeding, idle: RSS ${Math.round(idle?.rssMb ?? NaN)} MB, heap ${Math.round(idle?.heapMb ?? NaN)} MB`);
    const rows = [];
    for (const spec of CASES) {
      for (const connections of CONNECTIONS) {
        const row = await runCase(server.base, spec, connections);
        console.log(`${row.case} @ ${row.conns}: ${row['req/s']} req/s, p50 ${row['p50 ms']} ms, p99 ${row['p99 ms']} ms`);
        rows.push(row);
      }
    }
    console.table(rows);
  } finally {
    if (server) {
      const exited = new Promise((r) => server!.child.once('exit', r));
      server.child.kill('SIGTERM');
      await exited;
    }
    fakeEmbeddings?.child.kill('SIGTERM');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    clearTimeout(watchdog);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
