import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const library = fileURLToPath(new URL('../../scripts/debian-mirror.sh', import.meta.url));

/** `debian_mirror` (what scripts/setup-postgres.sh builds pgvector from) over an apt directory holding `files`. */
async function mirrorOf(files: Record<string, string>, codename = 'bookworm'): Promise<{ code: number; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'memrag-apt-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'sources.list.d'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return new Promise((resolve) => {
    execFile('bash', ['-c', 'source "$1" && debian_mirror "$2" "$3"', 'bash', library, dir, codename], (err, stdout) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code) || 1 : 0, stdout: stdout.trim() });
    });
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// Hosts below are examples of what a machine's apt sources hold: the script itself names none.
const DEBIAN_SOURCES = `Types: deb
# http://snapshot.example.org/archive/debian/20250520T000000Z
URIs: http://mirror.example.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`;

describe('the Debian mirror setup-postgres.sh takes from the apt sources', () => {
  it('a deb822 .sources file (URIs: and Suites:), not its security archive', async () => {
    expect(await mirrorOf({ 'sources.list.d/debian.sources': DEBIAN_SOURCES })).toEqual({ code: 0, stdout: 'http://mirror.example.org/debian' });
  });

  it('one-line deb entries in sources.list, options in brackets and comments included', async () => {
    const list = [
      '# deb http://commented.example.org/debian bookworm main',
      'deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://security.example.org/debian-security bookworm-security main',
      'deb-src http://sources.example.org/debian/ bookworm main contrib # a trailing comment',
      '',
    ].join('\n');
    expect(await mirrorOf({ 'sources.list': list })).toEqual({ code: 0, stdout: 'http://sources.example.org/debian' });
  });

  it('passes over third-party repositories, disabled stanzas and files apt ignores', async () => {
    const files = {
      'sources.list.d/pgdg.list': 'deb [signed-by=/usr/share/keyrings/pgdg.gpg] http://pgdg.example.org/pub/repos/apt bookworm-pgdg main\n',
      'sources.list.d/nodesource.sources': 'Types: deb\nURIs: https://node.example.org/node_20.x\nSuites: nodistro\nComponents: main\n',
      'sources.list.d/aaa-disabled.sources': 'Types: deb\nURIs: http://disabled.example.org/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n',
      'sources.list.d/old.list.save': 'deb http://saved.example.org/debian bookworm main\n',
      'sources.list.d/debian.sources': DEBIAN_SOURCES,
    };
    expect(await mirrorOf(files)).toEqual({ code: 0, stdout: 'http://mirror.example.org/debian' });
  });

  it('a multi-line Signed-By key in a stanza, and field names in any case', async () => {
    const sources = [
      'types: deb deb-src',
      'uris: mirror+file:///etc/apt/mirrors/debian.list',
      'suites: bookworm',
      'components: main',
      'Signed-By:',
      ' -----BEGIN PGP PUBLIC KEY BLOCK-----',
      ' .',
      ' URIs: http://inside-the-key.example.org/debian',
      ' -----END PGP PUBLIC KEY BLOCK-----',
      '',
    ].join('\n');
    expect(await mirrorOf({ 'sources.list.d/debian.sources': sources })).toEqual({ code: 0, stdout: 'mirror+file:///etc/apt/mirrors/debian.list' });
  });

  it('the release itself first, then its -updates or -backports suite', async () => {
    const list = 'deb http://backports.example.org/debian bookworm-backports main\ndeb http://release.example.org/debian bookworm main\n';
    expect((await mirrorOf({ 'sources.list': list })).stdout).toBe('http://release.example.org/debian');
    expect((await mirrorOf({ 'sources.list': 'deb http://backports.example.org/debian bookworm-backports main\n' })).stdout).toBe(
      'http://backports.example.org/debian',
    );
  });

  it('fails, printing nothing, when no entry serves the release', async () => {
    expect(await mirrorOf({ 'sources.list.d/debian.sources': DEBIAN_SOURCES }, 'trixie')).toEqual({ code: 1, stdout: '' });
    expect(await mirrorOf({})).toEqual({ code: 1, stdout: '' });
    expect(await mirrorOf({ 'sources.list.d/debian.sources': DEBIAN_SOURCES }, '')).toEqual({ code: 1, stdout: '' });
  });
});
