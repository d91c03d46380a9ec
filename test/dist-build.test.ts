import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Inside the repository, as dist/ is: the compiled server finds migrations/ and node_modules/ by walking up.
const outDir = join(repoRoot, 'node_modules', '.cache', 'memrag-dist-test');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [file, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 240_000 }, (err, stdout, stderr) => {
      done({ code: err ? Number((err as { code?: unknown }).code) || 1 : 0, stdout, stderr });
    });
  });
}

/**
 * The production image runs `node dist/main.js` over what `npm run build` (tsc with
 * tsconfig.build.json) emits, with no TypeScript loader: the compiled server must start on
 * embedded defaults, find its migrations, run its embedder's worker threads from .js files, and
 * the compiled CLIs must run too. Built here into a directory of the test's own, with the same config.
 */
describe('the compiled server (npm run build, then node dist/main.js)', () => {
  let child: ChildProcess | undefined;
  let base: string;

  beforeAll(async () => {
    rmSync(outDir, { recursive: true, force: true });
    const built = await run(tsc, ['-p', 'tsconfig.build.json', '--outDir', outDir]);
    expect(built.code, built.stdout + built.stderr).toBe(0);
    // The second half of `npm run build`: the console's bundle, written beside the compiled server.
    const bundled = await run('--import', ['tsx', 'scripts/build-console.ts', outDir]);
    expect(bundled.code, bundled.stdout + bundled.stderr).toBe(0);
    const { DATABASE_URL: _url, API_KEYS: _keys, NODE_OPTIONS: _options, ...inherited } = process.env;
    // Plain node: no tsx loader, as in the image. The embedder's workers are left on (their default).
    const started = spawn(process.execPath, [join(outDir, 'main.js')], {
      cwd: repoRoot,
      env: { ...inherited, DATA_DIR: 'memory://', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let stderr = '';
    started.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const port = await new Promise<number>((listening, failed) => {
      createInterface({ input: started.stdout! }).on('line', (line) => {
        const parsed = JSON.parse(line) as { msg?: string; port?: number };
        if (parsed.msg?.startsWith('memrag listening')) listening(parsed.port!);
      });
      started.once('exit', (code) => failed(new Error(`dist/main.js exited with ${code} before listening: ${stderr}`)));
    });
    base = `http://127.0.0.1:${port}`;
  }, 300_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child!.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(outDir, { recursive: true, force: true });
  });

  it('emits main.js at the top of the output, and no TypeScript', () => {
    const files = readdirSync(outDir, { recursive: true }).map(String);
    expect(files).toContain('main.js');
    expect(files).toContain(join('cli', 'keys.js'));
    expect(files.filter((f) => /\.[mc]?ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('answers /healthz and /readyz, migrated and with its embedder ready', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status, await ready.clone().text()).toBe(200);
  });

  it('saves and finds a memory: the embedder runs in worker threads loaded from .js', async () => {
    const saved = await fetch(`${base}/v1/memories/tea`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Alice prefers green tea' }),
    });
    expect(saved.status, await saved.clone().text()).toBe(201);
    const found = await fetch(`${base}/v1/memories/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'what does Alice drink?', mode: 'vector' }),
    });
    expect(((await found.json()) as { hits: { memory: { key: string } }[] }).hits.map((h) => h.memory.key)).toEqual(['tea']);
  });

  // The compiled tree has no browser sources (tsc leaves .tsx and .css out): the console is served
  // from what the build wrote, or not at all.
  it('serves the console from the bundle the build wrote', async () => {
    const page = await fetch(`${base}/console`);
    expect(page.status).toBe(200);
    const script = await fetch(`${base}/console/console.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect((await script.text()).length).toBeGreaterThan(10_000);
    expect((await fetch(`${base}/console/console.css`)).status).toBe(200);
  });

  it('runs the compiled keys CLI', async () => {
    const help = await run(join(outDir, 'cli', 'keys.js'), ['--help'], { DATA_DIR: 'memory://' });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout + help.stderr).toMatch(/create/);
  });
});
