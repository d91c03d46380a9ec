import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function npm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('npm', args, { cwd: root, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code) || 1 : 0, stdout, stderr });
    });
  });
}

/**
 * A first run without noise: the project's npm configuration gives npm nothing to warn about.
 * `.npmrc` once held `onnxruntime-node-install=skip`, a key npm does not know, and every npm
 * command warned about it; onnxruntime-node's CUDA download is now denied in package.json's
 * `allowScripts` instead.
 */
describe("the project's npm configuration", () => {
  it('.npmrc sets only settings npm knows', async () => {
    const { code, stderr } = await npm(['config', 'list']);
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/project config/i);
  });

  it("reviews every dependency's install script, and denies onnxruntime-node's CUDA download", async () => {
    const { allowScripts } = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { allowScripts?: Record<string, boolean> };
    expect(allowScripts?.['onnxruntime-node']).toBe(false);
    const listed = await npm(['install-scripts', 'ls']);
    // npm without allowScripts support has no such command (it runs every install script; see the README).
    if (listed.code !== 0) return;
    expect(listed.stdout + listed.stderr).toMatch(/No packages with unreviewed install scripts/);
  });
});
