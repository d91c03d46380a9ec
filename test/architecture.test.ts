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

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: Array<{ name: string }>;
}

/** Every import under `dir`/src checked against the rules of .dependency-cruiser.cjs. */
async function violationsIn(dir: string): Promise<string[]> {
  // Exits non-zero when it finds violations: the report is read either way.
  const run = await promisify(execFile)(DEPCRUISE, ['src', '--config', RULES, '--output-type', 'json'], { cwd: dir, maxBuffer: 256 * 1024 * 1024 }).catch(
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }),
  );
  const report = JSON.parse(run.stdout) as { summary: { violations: Violation[] } };
  return report.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`);
}

describe('the dependency rules (docs/ARCHITECTURE.md)', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'memrag-architecture-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('hold for every import under src/', async () => {
    expect(await violationsIn(ROOT)).toEqual([]);
  });

  it('name the import and the rule it breaks when src/db imports src/chat', async () => {
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), text);
    };
    write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
    write('src/chat/chat-service.ts', 'export const chat = 1;\n');
    write('src/db/leak.ts', "import { chat } from '../chat/chat-service.js';\nexport const leak = chat;\n");
    write('src/main.ts', "import { leak } from './db/leak.js';\nexport const main = leak;\n");
    expect(await violationsIn(scratch)).toEqual([
      'chat-only-from-edges: src/db/leak.ts -> src/chat/chat-service.ts',
      'db-imports-no-feature: src/db/leak.ts -> src/chat/chat-service.ts',
    ]);
  });

  it('name the folders of a loop between folders that no file cycle closes', async () => {
    const tree = mkdtempSync(join(scratch, 'folders-'));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    };
    write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
    // config/limits.ts -> compaction/budget.ts, and compaction/window.ts -> config/defaults.ts: four files, no file cycle.
    write('src/config/defaults.ts', 'export const defaults = 1;\n');
    write('src/config/limits.ts', "import { budget } from '../compaction/budget.js';\nexport const limits = budget;\n");
    write('src/compaction/budget.ts', 'export const budget = 2;\n');
    write('src/compaction/window.ts', "import { defaults } from '../config/defaults.js';\nexport const window = defaults;\n");
    write(
      'src/main.ts',
      "import { limits } from './config/limits.js';\nimport { window } from './compaction/window.js';\nexport const main = limits + window;\n",
    );
    const violations = await violationsIn(tree);
    expect(violations.filter((v) => v.startsWith('no-cycles'))).toEqual([]);
    expect(violations.filter((v) => v.startsWith('no-folder-cycles')).sort()).toEqual([
      'no-folder-cycles: src/compaction -> src/config (cycle: src/config -> src/compaction)',
      'no-folder-cycles: src/config -> src/compaction (cycle: src/compaction -> src/config)',
    ]);
  });
});
