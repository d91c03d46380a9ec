import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';

/**
 * A fresh PGlite runs initdb inside WebAssembly: 2-3 s on this project's machine, most of what
 * opening an in-memory database costs. With MEMRAG_PGLITE_COPY=1 (the test runner sets it), the
 * first in-memory database of a process, once `prepare` (the migrations) has run on it, is kept
 * as a gzipped copy (about 4 MB, 0.5 s to make), and the next ones load that copy (about 0.7 s).
 * Tests only: a server or a bench keeps opening its one database as before, and pays no copy.
 */
let template: Promise<Blob | undefined> | undefined;

export async function openInMemoryPglite(prepare: (client: PGlite) => Promise<void>): Promise<PGlite> {
  if (process.env.MEMRAG_PGLITE_COPY !== '1') {
    const client = await PGlite.create({ extensions: { vector } });
    await prepare(client);
    return client;
  }
  const copy = await template;
  if (copy) {
    const client = await PGlite.create({ loadDataDir: copy, extensions: { vector } });
    // Finds every migration applied already (the copy was made after them): a quick check.
    await prepare(client);
    return client;
  }
  const client = await PGlite.create({ extensions: { vector } });
  await prepare(client);
  // A failed copy costs the next database its speed, never its opening.
  template ??= client.dumpDataDir('gzip').catch(() => undefined);
  await template;
  return client;
}
