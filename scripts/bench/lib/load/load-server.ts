import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type ScriptedLlmServer, startScriptedLlmServer } from '../../../../testkit/scripted-llm-server.js';
import { freshServerDatabase } from '../fresh-server-database.js';
import { repoRoot, PG_URL, LOG_LEVEL, SERVER_BUILD, SERVER_NODE_ARGS, HEAP_SNAPSHOT_DIR, type Driver } from './load-config.js';
import { words } from './load-client.js';

// The server under load: a checkout's server (dist/main.js or src/main.ts) in a child process, and the helpers it shares.
export interface Version {
  name: string;
  dir: string;
}

export interface Server {
  child: ChildProcess;
  base: string;
  stop(): Promise<void>;
}

/**
 * Starts `script` in `cwd`, under tsx unless it is JavaScript; resolves once `ready` finds what it
 * waits for in a line of its output.
 */
async function startProcess(cwd: string, script: string, env: NodeJS.ProcessEnv, ready: (line: string) => string | undefined, nodeArgs: string[] = []) {
  const loader = script.endsWith('.js') ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, script], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
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

/** The scripted OpenAI-compatible model every server of the run chats and extracts with. */
export async function startScriptedModel(): Promise<void> {
  llm = await startScriptedLlmServer((request) =>
    // Extraction asks for JSON; an empty list of facts ends it after one call, as a quiet turn would.
    String(request.body.messages[0]?.content ?? '').includes('facts worth remembering')
      ? { kind: 'reply', content: '{"facts": []}', usage: { prompt_tokens: 300, completion_tokens: 5 } }
      : { kind: 'reply', content: `Noted: ${words(12)}.`, usage: { prompt_tokens: 600, completion_tokens: 20 } },
  );
}

/** Stops what the servers of the run shared: the fake embedder's process and the scripted model. */
export async function stopSharedProcesses(): Promise<void> {
  fakeEmbeddings?.child.kill('SIGTERM');
  await llm?.close();
}

/** Checkouts compiled in this run: each is built once, before its first server. */
const built = new Map<string, Promise<void>>();

function build(dir: string): Promise<void> {
  let done = built.get(dir);
  if (!done) {
    done = new Promise<void>((resolveBuild, reject) => {
      // Its output goes to stderr: tsc reports errors on stdout, and the bench's own stdout is its figures.
      const child = spawn('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', process.stderr, 'inherit'] });
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolveBuild() : reject(new Error(`npm run build in ${dir} exited with ${code}`))));
    });
    built.set(dir, done);
  }
  return done;
}

export async function startServer(version: Version, driver: Driver, embedder: string): Promise<Server> {
  if (SERVER_BUILD === 'dist') await build(version.dir);
  const { API_KEYS: _keys, DATABASE_URL: _url, ...inherited } = process.env;
  const dataDir = driver === 'pglite' ? mkdtempSync(join(os.tmpdir(), 'memrag-load-')) : undefined;
  const database = driver === 'pg' ? await freshServerDatabase(PG_URL, 'memrag_bench_load') : undefined;
  if (embedder === 'fake') fakeEmbeddings ??= await startProcess(repoRoot, 'scripts/bench/lib/fake-embeddings-process.ts', process.env, (line) => line);
  const { child, value } = await startProcess(
    version.dir,
    SERVER_BUILD === 'dist' ? 'dist/main.js' : 'src/main.ts',
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
