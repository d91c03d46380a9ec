import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/app-context.js';
import { createApp, createTestContext } from '../../http/http-test-context.js';
import { type ListeningServer, listen } from '../../robustness/support/listening-server.js';
import { openPage, shoot } from './console-page.js';
import type { HeadlessChromium } from './headless-chromium.js';

/** A keyless loopback server: no sign-in, the memory editor, paging, history, export and import, and the CSP. Registered inside the headless Chromium suite, which owns the browser. */
export function consoleKeylessServerCases(browser: () => HeadlessChromium) {
  describe('against a keyless loopback server', () => {
    let ctx: AppContext;
    let server: ListeningServer;
    beforeAll(async () => {
      ctx = await createTestContext();
      server = await listen(createApp(ctx));
    });
    afterAll(async () => {
      await server?.close();
      await ctx?.close();
    });

    it('opens directly, without asking for a key', async () => {
      const { page, errors } = await openPage(browser());
      await page.goto(`${server.base}/console`);
      await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();
      expect(await page.getByText('keyless', { exact: true }).isVisible()).toBe(true);
      expect(await page.getByLabel('API key').count()).toBe(0);
      await shoot(page, '00-keyless');
      expect(errors).toEqual([]);
      await page.close();
    });

    it('focuses the new memory editor as it appears, so what is typed at once stays in the key field', async () => {
      const { page, errors } = await openPage(browser());
      await page.goto(`${server.base}/console`);
      await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();
      // Where the focus is when the editor's fields reach the page (a mutation observer runs before
      // the browser paints, or takes any input): moved a frame later, it took over keystrokes
      // already going to the key field, and the memory was saved under a made-up key.
      await page.evaluate(`new MutationObserver((changes, observer) => {
      const content = document.querySelector('[aria-labelledby="memory-editor-title"] textarea');
      if (!content) return;
      window.focusedOnArrival = document.activeElement === content;
      observer.disconnect();
    }).observe(document.body, { childList: true, subtree: true })`);
      await page.getByRole('button', { name: 'New memory' }).click();
      await page.getByLabel('Content').waitFor();
      expect(await page.evaluate('window.focusedOnArrival')).toBe(true);
      expect(errors).toEqual([]);
      await page.close();
    });

    it("pages through memories, shows an edited memory's history, exports and imports a conversation, deletes a document", async () => {
      for (let i = 1; i <= 25; i++) {
        const key = `note-${String(i).padStart(2, '0')}`;
        expect((await server.send('PUT', `/v1/memories/${key}`, { content: `Note number ${i}`, tags: ['notes'] })).status).toBe(201);
      }
      expect(
        (await server.send('POST', '/v1/documents', { title: 'Kettle', text: '# Kettle\n\nDescale the kettle with vinegar every month.', format: 'markdown' }))
          .status,
      ).toBe(201);
      const { page, errors } = await openPage(browser());
      await page.goto(`${server.base}/console`);
      await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();

      // Pages of 20.
      const rows = page.locator('table tbody tr');
      await expect.poll(() => rows.count()).toBe(20);
      await page.getByRole('button', { name: 'Next page' }).click();
      await expect.poll(() => rows.count()).toBe(5);
      expect(await page.locator('caption').textContent()).toBe('All memories (page 2)');
      expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await expect.poll(() => rows.count()).toBe(20);

      // Edit, then the history shows both versions, oldest first.
      const key = (await rows.first().locator('td').first().textContent())!;
      const number = Number(key.replace('note-', ''));
      await page.getByRole('button', { name: `Edit ${key}` }).click();
      await page.getByLabel('Content').fill('Rewritten note');
      await page.getByRole('button', { name: 'Save memory' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Saved ${key}` })
        .waitFor();
      await page.getByRole('button', { name: `Edit ${key}` }).click();
      await expect
        .poll(() => page.locator('.history li').allTextContents())
        .toEqual([
          expect.stringMatching(new RegExp(`created by api: Note number ${number} \\[notes\\]$`)),
          expect.stringMatching(/updated by api: Rewritten note \[notes\]$/),
        ]);
      await shoot(page, '16-memory-history');

      // A turn, exported as a file and imported back: a second conversation, opened with its turn.
      await page.getByRole('link', { name: 'Chat' }).click();
      await page.getByLabel('Message').fill('How do I descale the kettle?');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor();
      const conversations = page.locator('.conversations li');
      await expect.poll(() => conversations.count()).toBe(1);
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        conversations
          .first()
          .getByRole('button', { name: /^Export / })
          .click(),
      ]);
      const exported = await download.path();
      expect(JSON.parse(await readFile(exported, 'utf8'))).toMatchObject({ format: 'memrag.conversation', version: 1 });
      await page.getByRole('button', { name: 'New conversation' }).click();
      expect(await page.locator('.turn').count()).toBe(0);
      await page.getByLabel('Import…').setInputFiles(exported);
      await page
        .getByRole('status')
        .filter({ hasText: /^Opened / })
        .waitFor();
      await expect.poll(() => conversations.count()).toBe(2);
      expect(await page.locator('.turn .question').textContent()).toContain('How do I descale the kettle?');
      expect(await page.locator('.turn .answer').textContent()).toContain('Descale the kettle with vinegar');
      await shoot(page, '17-chat-imported');

      // Delete a document from the list.
      await page.getByRole('link', { name: 'Documents' }).click();
      await page.getByRole('button', { name: 'Delete Kettle' }).click();
      await page.getByRole('status').filter({ hasText: 'Deleted Kettle' }).waitFor();
      await page.getByText('No documents yet.').waitFor();
      expect((await server.send('GET', '/v1/documents')).body.items).toEqual([]);

      expect(errors).toEqual([]);
      await page.close();
    });

    it('runs under a CSP that refuses inline scripts and styles, and the error watch sees each refusal', async () => {
      const { page, errors } = await openPage(browser());
      await page.goto(`${server.base}/console`);
      await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();
      // What an injected script or style would do: both must be refused, and reported.
      await page.evaluate(`document.body.insertAdjacentHTML('beforeend', '<div style="color: red">styled</div>');
      const script = document.createElement('script');
      script.textContent = 'window.injected = true';
      document.body.append(script);`);
      expect(await page.evaluate('window.injected === true')).toBe(false);
      await expect.poll(() => errors.filter((e) => e.includes('CSP violation')).length).toBe(2);
      await page.close();
    });
  });
}
