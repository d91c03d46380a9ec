import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { runBackupCli, runRestoreCli } from '../../src/db/backup-cli.js';
import { openDatabase } from '../../src/db/database.js';
import { describeError } from '../../src/api/error-mapping.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { call, createApp } from '../http/http-test-context.js';

const root = mkdtempSync(join(tmpdir(), 'memrag-backup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function openContext(dataDir: string): Promise<AppContext> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
  return createAppContext(config, { embedder: createHashEmbedder(64), describeError });
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

const MEMORY_QUERIES = [
  { query: 'where is the car parked?', mode: 'hybrid' },
  { query: 'glacier tours', mode: 'vector' },
  { query: 'green tea', mode: 'text' },
];
const DOCUMENT_QUERIES = [
  { query: 'how do I prime the pump?', mode: 'hybrid' },
  { query: 'steamed tea leaves', mode: 'vector' },
  { query: 'centrifugal pump water', mode: 'text' },
];

/** What a client reads back: memory and document searches, and the conversation. */
async function readBack(ctx: AppContext, conversationId: string) {
  const app = createApp(ctx);
  const memories = [];
  for (const q of MEMORY_QUERIES) {
    const reply = await call(app, 'POST', '/v1/memories/search', { ...q, topK: 10 });
    expect(reply.status).toBe(200);
    memories.push(reply.body);
  }
  const documents = [];
  for (const q of DOCUMENT_QUERIES) {
    const reply = await call(app, 'POST', '/v1/search', { ...q, topK: 10 });
    expect(reply.status).toBe(200);
    documents.push(reply.body);
  }
  const conversation = await call(app, 'GET', `/v1/conversations/${conversationId}`);
  expect(conversation.status).toBe(200);
  return { memories, documents, conversation: conversation.body };
}

describe('backup and restore of the embedded store', () => {
  it('restores a store that answers the same searches with the same hits, order and scores', async () => {
    const source = join(root, 'source');
    const ctx = await openContext(source);
    let before: Awaited<ReturnType<typeof readBack>>;
    let conversationId: string;
    try {
      const app = createApp(ctx);
      for (const [key, content] of [
        ['ingrid', 'Ingrid Halvorsen runs the glacier tours'],
        ['parking', 'The car is parked on level 3 of the depot, spot 7G-118'],
        ['tea', 'Alice prefers green tea in the afternoon'],
        ['glacier', 'The glacier tours leave at nine from the north gate'],
      ] as const) {
        expect((await call(app, 'PUT', `/v1/memories/${key}`, { content, tags: ['seed'] })).status).toBeLessThan(300);
      }
      for (const [title, text] of [
        ['Pump guide', 'Prime the centrifugal pump with water before starting it. Never run the pump dry.'],
        ['Tea guide', 'Green tea leaves are steamed, then rolled and dried. Black tea is oxidised.'],
      ] as const) {
        expect((await call(app, 'POST', '/v1/documents', { title, text, format: 'text' })).status).toBeLessThan(300);
      }
      const chat = await call(app, 'POST', '/v1/chat', { message: 'Where is the car parked?' });
      expect(chat.status).toBe(200);
      conversationId = chat.body.conversationId;
      await ctx.backgroundTasks.whenIdle();
      before = await readBack(ctx, conversationId);
      expect(before.memories.every((r) => r.hits.length > 0)).toBe(true);
      expect(before.documents.every((r) => r.hits.length > 0)).toBe(true);
      expect((before.conversation.messages as unknown[]).length).toBeGreaterThanOrEqual(2);

      // While the store is open, a backup is refused rather than taken beside it.
      const inUse = io();
      expect(await runBackupCli([join(root, 'open.tar.gz')], { dataDir: source }, inUse.io)).toBe(1);
      expect(inUse.err.join('\n')).toMatch(/is in use[\s\S]*Stop the memrag server/);
      expect(existsSync(join(root, 'open.tar.gz'))).toBe(false);
    } finally {
      await ctx.close();
    }

    const file = join(root, 'store.tar.gz');
    const backup = io();
    expect(await runBackupCli([file], { dataDir: source }, backup.io)).toBe(0);
    expect(backup.out.join('\n')).toMatch(/Backed up .* \(\d+ bytes\)/);
    expect(readdirSync(root).filter((f) => f.includes('.partial-'))).toEqual([]);
    // The source is left closed, as it was found.
    expect(existsSync(join(source, 'postmaster.pid'))).toBe(false);

    const again = io();
    expect(await runBackupCli([file], { dataDir: source }, again.io)).toBe(1);
    expect(again.err.join('\n')).toMatch(/exists: name a new file/);

    const restored = join(root, 'restored');
    const restore = io();
    expect(await runRestoreCli([file], { dataDir: restored }, restore.io)).toBe(0);
    expect(restore.out.join('\n')).toContain(`Restored ${file} into ${restored}`);
    expect(readdirSync(restored).filter((f) => f.startsWith('.restoring'))).toEqual([]);

    const reopened = await openContext(restored);
    try {
      expect(await readBack(reopened, conversationId!)).toEqual(before!);
    } finally {
      await reopened.close();
    }
  }, 180_000);

  it('refuses a non-empty DATA_DIR without --force, and a directory in use even with it', async () => {
    const dataDir = join(root, 'refusals');
    const database = await openDatabase({ dataDir });
    await database.close();
    const file = join(root, 'refusals.tar.gz');
    expect(await runBackupCli([file], { dataDir }, io().io)).toBe(0);

    const target = join(root, 'occupied');
    mkdirSync(target);
    writeFileSync(join(target, 'notes.txt'), 'keep me');
    const refused = io();
    expect(await runRestoreCli([file], { dataDir: target }, refused.io)).toBe(1);
    expect(refused.err.join('\n')).toMatch(/is not empty: restore into an empty DATA_DIR, or pass --force/);
    expect(readdirSync(target)).toEqual(['notes.txt']);

    const open = await openDatabase({ dataDir });
    try {
      const live = io();
      expect(await runRestoreCli(['--force', file], { dataDir }, live.io)).toBe(1);
      expect(live.err.join('\n')).toMatch(/is in use/);
    } finally {
      await open.close();
    }

    const forced = io();
    expect(await runRestoreCli(['--force', file], { dataDir: target }, forced.io)).toBe(0);
    expect(readdirSync(target)).toContain('PG_VERSION');
    expect(readdirSync(target)).not.toContain('notes.txt');
    const reopened = await openDatabase({ dataDir: target });
    await reopened.close();
  }, 180_000);

  it('leaves DATA_DIR as it was when the file is not a backup', async () => {
    const file = join(root, 'not-a-backup.tar.gz');
    writeFileSync(file, 'this is not a tarball');
    const dataDir = join(root, 'untouched');
    const failed = io();
    expect(await runRestoreCli([file], { dataDir }, failed.io)).toBe(1);
    expect(failed.err.join('\n')).toMatch(/could not be loaded as a PGlite backup/);
    expect(existsSync(dataDir)).toBe(false);

    const occupied = join(root, 'occupied-by-notes');
    mkdirSync(occupied);
    writeFileSync(join(occupied, 'notes.txt'), 'keep me');
    expect(await runRestoreCli(['--force', file], { dataDir: occupied }, io().io)).toBe(1);
    expect(readdirSync(occupied)).toEqual(['notes.txt']);
  }, 60_000);
});
