import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGLITE_SHARED_BUFFERS, openDatabase } from '../../src/db/database.js';

const sharedBuffers = async (options: { dataDir: string; pgliteSharedBuffers?: string }) => {
  const database = await openDatabase(options);
  try {
    const { rows } = (await database.db.execute(sql`SHOW shared_buffers`)) as unknown as { rows: Array<{ shared_buffers: string }> };
    return rows[0]!.shared_buffers;
  } finally {
    await database.close();
  }
};

describe("PGlite's buffer cache on a data directory", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'memrag-shared-buffers-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("is bounded below PostgreSQL's 128MB, and takes the size it is given", async () => {
    const dataDir = path.join(root, 'data');
    expect(await sharedBuffers({ dataDir })).toBe(PGLITE_SHARED_BUFFERS);
    expect(PGLITE_SHARED_BUFFERS).not.toBe('128MB');
    expect(await sharedBuffers({ dataDir, pgliteSharedBuffers: '16MB' })).toBe('16MB');
  });
});
