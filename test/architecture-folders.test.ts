import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const RULES = join(ROOT, '.dependency-cruiser.cjs');

/**
 * Subfolders that count as folders of their own: layers the folder map (docs/ARCHITECTURE.md)
 * gives a job apart from their parent's, so that the parent may use them but they must not need
 * it back. Every other subfolder is part of its top folder (a parser registry imports its formats,
 * the formats its types), and a loop inside a folder is the file-level `no-cycles` rule's business.
 */
const OWN_FOLDERS = ['memory/firewall', 'memory/extraction', 'retrieval/bm25', 'retrieval/rerank', 'documents/chunking', 'console/browser'];

/**
 * Folder loops known to remain, each as its folders in order; anything else fails. Empty the list
 * as they close: a loop listed here that no longer exists fails too, so the list cannot go stale.
 * - http and mcp: mcp takes http's errors and request schemas while http serves mcp; what both use
 *   belongs in a folder under both.
 */
const TOLERATED_LOOPS: string[][] = [['http', 'mcp']];

/** The folder an import counts for: its top folder under src/, or one of OWN_FOLDERS; none for files at src/'s root. */
function folderOf(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'src' || parts.length < 3) return undefined;
  const own = OWN_FOLDERS.find((folder) => path.startsWith(`src/${folder}/`));
  return own ?? parts[1];
}

interface Cruise {
  modules: Array<{ source: string; dependencies: Array<{ resolved: string }> }>;
}

/** Folder-to-folder imports under `dir`/src, each with one file import that makes it. */
async function folderEdges(dir: string): Promise<Map<string, Map<string, string>>> {
  // Exits non-zero when a file-level rule is broken: the modules are read either way.
  const run = await promisify(execFile)(DEPCRUISE, ['src', '--config', RULES, '--output-type', 'json'], { cwd: dir, maxBuffer: 256 * 1024 * 1024 }).catch(
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }),
  );
  const edges = new Map<string, Map<string, string>>();
  for (const module of (JSON.parse(run.stdout) as Cruise).modules) {
    const from = folderOf(module.source);
    if (from === undefined) continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (to === undefined || to === from) continue;
      const targets = edges.get(from) ?? edges.set(from, new Map()).get(from)!;
      if (!targets.has(to)) targets.set(to, `${module.source} -> ${dependency.resolved}`);
    }
  }
  return edges;
}

/** The folders that reach each other (strongly connected components of two folders or more), each sorted. */
function folderLoops(edges: Map<string, Map<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const loops: string[][] = [];
  const visit = (folder: string) => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder)!);
    stack.push(folder);
    for (const next of edges.get(folder)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(folder, Math.min(low.get(folder)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(folder, Math.min(low.get(folder)!, index.get(next)!));
      }
    }
    if (low.get(folder) !== index.get(folder)) return;
    const members = stack.splice(stack.indexOf(folder));
    if (members.length > 1) loops.push(members.sort());
  };
  for (const folder of edges.keys()) if (!index.has(folder)) visit(folder);
  return loops.sort((a, b) => a.join().localeCompare(b.join()));
}

/** A loop as the test names it when it fails: its folders, then each import between them. */
function describeLoop(loop: string[], edges: Map<string, Map<string, string>>): string {
  const imports = loop.flatMap((from) =>
    [...(edges.get(from) ?? [])].filter(([to]) => loop.includes(to)).map(([to, example]) => `  ${from} -> ${to} (${example})`),
  );
  return [`${loop.join(' <-> ')}:`, ...imports].join('\n');
}

/** Loops not in `tolerated`, and tolerated loops that no longer exist. */
async function checkFolders(dir: string, tolerated: string[][]): Promise<{ newLoops: string[]; closedButListed: string[] }> {
  const edges = await folderEdges(dir);
  const loops = folderLoops(edges);
  const key = (loop: string[]) => [...loop].sort().join(' <-> ');
  const known = new Set(tolerated.map(key));
  const found = new Set(loops.map(key));
  return {
    newLoops: loops.filter((loop) => !known.has(key(loop))).map((loop) => describeLoop(loop, edges)),
    closedButListed: [...known].filter((loop) => !found.has(loop)),
  };
}

describe('folders under src/ import each other one way', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'memrag-folder-loops-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('with no loop between folders but the ones listed', async () => {
    expect(await checkFolders(ROOT, TOLERATED_LOOPS)).toEqual({ newLoops: [], closedButListed: [] });
  });

  it('names the loop and its imports when a folder imports back a folder that imports it, without a file cycle', async () => {
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), text);
    };
    write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
    write('src/config/settings.ts', "import { limit } from '../compaction/limit.js';\nexport const settings = limit;\n");
    write('src/compaction/limit.ts', 'export const limit = 1;\n');
    write('src/compaction/compactor.ts', "import { settings } from '../config/settings.js';\nexport const compactor = settings;\n");
    // A subfolder of OWN_FOLDERS is a folder of its own; any other belongs to its top folder.
    write('src/memory/memory-types.ts', "import { screen } from './firewall/screen.js';\nexport const types = screen;\n");
    write('src/memory/firewall/screen.ts', "import { reasons } from '../reasons.js';\nexport const screen = reasons;\n");
    write('src/memory/reasons.ts', 'export const reasons = 1;\n');
    write('src/documents/parsers/registry.ts', "import { format } from './formats/text.js';\nexport const registry = format;\n");
    write('src/documents/parsers/formats/text.ts', "import { kind } from '../kind.js';\nexport const format = kind;\n");
    write('src/documents/parsers/kind.ts', 'export const kind = 1;\n');
    write(
      'src/main.ts',
      [
        "import { compactor } from './compaction/compactor.js';",
        "import { types } from './memory/memory-types.js';",
        "import { registry } from './documents/parsers/registry.js';",
        'export const main = [compactor, types, registry];',
        '',
      ].join('\n'),
    );
    expect(await checkFolders(scratch, [['http', 'mcp']])).toEqual({
      newLoops: [
        [
          'compaction <-> config:',
          '  compaction -> config (src/compaction/compactor.ts -> src/config/settings.ts)',
          '  config -> compaction (src/config/settings.ts -> src/compaction/limit.ts)',
        ].join('\n'),
        [
          'memory <-> memory/firewall:',
          '  memory -> memory/firewall (src/memory/memory-types.ts -> src/memory/firewall/screen.ts)',
          '  memory/firewall -> memory (src/memory/firewall/screen.ts -> src/memory/reasons.ts)',
        ].join('\n'),
      ],
      closedButListed: ['http <-> mcp'],
    });
  });
});
