import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config/config.js';

/** The variables a Markdown table names in its first column (`| \`NAME\` | …`). */
function tableVariables(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)`/gm)].map((m) => m[1] as string);
}

/** What docs/operations.md's table documents beside the schema: read by the npm scripts, not by the server. */
const READ_OUTSIDE_CONFIG = ['MALLOC_ARENA_MAX'];

const schemaVariables = Object.keys(envSchema.shape);

describe('the configuration tables', () => {
  it("docs/operations.md names every variable the configuration reads, in its table or a row's text", () => {
    const text = readFileSync('docs/operations.md', 'utf8');
    const rows = text.split('\n').filter((line) => line.startsWith('| `'));
    const missing = schemaVariables.filter((name) => !rows.some((row) => row.includes(`\`${name}\``)));
    expect(missing).toEqual([]);
  });

  it('names no variable, in docs/operations.md or the README, that the configuration does not read', () => {
    const package_ = readFileSync('package.json', 'utf8');
    for (const name of READ_OUTSIDE_CONFIG) expect(package_, name).toContain(name);
    const unknown = [...tableVariables('docs/operations.md'), ...tableVariables('README.md')].filter(
      (name) => !schemaVariables.includes(name) && !READ_OUTSIDE_CONFIG.includes(name),
    );
    expect(unknown).toEqual([]);
  });

  it("gives in the README's table the defaults the configuration has", () => {
    const rows = [...readFileSync('README.md', 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)`\s*\| `([^`]+)`/gm)];
    expect(rows.length).toBeGreaterThan(5);
    const shape = envSchema.shape as Record<string, { parse(value: unknown): unknown }>;
    for (const [, name, documented] of rows) {
      const actual = shape[name as string]?.parse(undefined);
      expect(String(actual), name).toBe(documented);
    }
  });
});
