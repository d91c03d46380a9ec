import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/app-context.js';
import { createApp, createTestContext } from '../../http/http-test-context.js';
import { type ListeningServer, listen } from '../../robustness/support/listening-server.js';
import { openPage, shoot, sidewaysOverflow } from './console-page.js';
import type { HeadlessChromium } from './headless-chromium.js';

const API_KEY = 'console-e2e-key';

// Two sections of ~200 tokens each, so that each is a chunk of its own (256-token chunks) under its heading path.
const PUMP_GUIDE = [
  '# Pumps',
  '## Priming',
  'Prime the centrifugal pump with water before starting it. A dry impeller wears out the mechanical seal within minutes, ' +
    'and the pump cannot lift water it has not been primed with. Close the discharge valve, open the vent screw on top of the ' +
    'casing and pour clean water into the priming port until it runs out of the vent without bubbles. Refit the vent screw ' +
    'and the port plug hand-tight. Start the motor with the discharge valve closed, then open the valve slowly over ten ' +
    'seconds while watching the pressure gauge. If the needle falls back to zero the casing still holds air: stop the motor, ' +
    'wait a minute and prime it again. Suction lines longer than seven metres need a foot valve, or the water drains back ' +
    'into the well each time the pump stops and it must be primed before every start.',
  '## Storage',
  'Drain the pump before winter. Water left in the casing freezes, expands and cracks the cast iron, which cannot be ' +
    'repaired. Disconnect the power at the breaker, open the drain plug at the bottom of the volute and let the casing empty ' +
    'into a bucket. Remove the suction hose, coil it without kinks and hang it in a dry shed. Spray the shaft with a light ' +
    'machine oil so it does not seize, and cover the motor with a breathable cloth rather than plastic, which traps ' +
    'condensation against the windings. In spring, refit the drain plug with fresh thread tape, reconnect the hose, check ' +
    'the impeller turns freely by hand and prime the pump before its first start of the season.',
].join('\n\n');
const RECIPES = '# Bread\n\nBake the bread at 220 degrees for forty minutes.\n';

/** Signed in with an API key: memories, documents, a cited chat, search, agents and delete by tag, one walk through. Registered inside the headless Chromium suite, which owns the browser. */
export function consoleWithApiKeysCases(browser: () => HeadlessChromium) {
  describe('against a server with API keys', () => {
    let ctx: AppContext;
    let server: ListeningServer;
    beforeAll(async () => {
      ctx = await createTestContext({ API_KEYS: `acme:${API_KEY}` });
      server = await listen(createApp(ctx));
    });
    afterAll(async () => {
      await server?.close();
      await ctx?.close();
    });

    it('signs in, files memories by tag, cites an uploaded document in a streamed chat, and deletes by tag', async () => {
      const { page, errors } = await openPage(browser());
      await page.goto(`${server.base}/console`);

      // Sign-in: a wrong key shows the server's 401 as it is.
      await expect.poll(() => page.getByRole('heading', { name: 'memrag console' }).isVisible()).toBe(true);
      await shoot(page, '01-sign-in');
      await page.getByLabel('API key').fill('not-the-key');
      await page.getByLabel('API key').press('Enter');
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('401 unauthorized: The API key is not valid');
      await shoot(page, '02-sign-in-refused');
      // The refused request is the only thing the browser may complain about.
      expect(
        errors.every((e) => /status of 401/.test(e)),
        errors.join('\n'),
      ).toBe(true);
      errors.length = 0;
      await page.getByLabel('API key').fill(API_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();
      expect(await page.evaluate("sessionStorage.getItem('memrag.apiKey')")).toBe(API_KEY);

      // Two memories with tags.
      for (const [key, content, tags] of [
        ['tea', 'Ada drinks green tea every morning', 'drinks, ada'],
        ['bike', 'Ada rides a red bicycle to work', 'ada'],
      ] as const) {
        await page.getByRole('button', { name: 'New memory' }).click();
        await page.getByLabel('Key (optional: one is made up when left empty)').fill(key);
        await page.getByLabel('Content').fill(content);
        await page.getByLabel('Tags (separated by commas)').fill(tags);
        await page.getByRole('button', { name: 'Save memory' }).click();
        // The editor closes once this save is acknowledged: the status alone could be the last one's.
        await page.getByRole('button', { name: 'Save memory' }).waitFor({ state: 'hidden' });
        await page.getByRole('status').filter({ hasText: 'Memory saved' }).waitFor();
        await page.getByRole('cell', { name: key, exact: true }).waitFor();
      }
      const memoryRows = page.locator('table tbody tr');
      expect(await memoryRows.count()).toBe(2);
      expect(await page.locator('.tag-list li').allTextContents()).toEqual([expect.stringMatching(/^ada \(2\)/), expect.stringMatching(/^drinks \(1\)/)]);

      // Filter: all of `drinks`.
      const drinksAll = page.getByRole('group', { name: 'Filter by drinks' }).getByRole('button', { name: 'all' });
      await drinksAll.click();
      await expect.poll(() => memoryRows.count()).toBe(1);
      expect(await memoryRows.first().textContent()).toContain('Ada drinks green tea');
      expect(await drinksAll.getAttribute('aria-pressed')).toBe('true');
      expect(await page.locator('caption').textContent()).toContain('Memories tagged all of drinks');
      await shoot(page, '03-memories-filtered');

      // Search, text mode: the score and each side's rank.
      await drinksAll.click();
      await page.getByRole('searchbox', { name: 'Search' }).fill('bicycle');
      await page.getByRole('radio', { name: 'text' }).check();
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByRole('table', { name: 'Search results (text)' }).waitFor();
      const hit = await page.locator('table tbody tr').first().locator('td').allTextContents();
      expect(hit.slice(1, 4)).toEqual(['–', '1', 'bike']);
      expect(Number(hit[0])).toBeGreaterThan(0);
      await shoot(page, '04-memories-search');
      await page.getByRole('button', { name: 'Clear search' }).click();

      // Documents: two Markdown files dropped at once, tagged.
      await page.getByRole('link', { name: 'Documents' }).click();
      await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
      await page.getByLabel('Tags for the uploads (separated by commas)').fill('manual');
      const files = [
        { name: 'pump-guide.md', text: PUMP_GUIDE },
        { name: 'recipes.md', text: RECIPES },
      ];
      // What a drag from the file manager hands the page: a DataTransfer holding the files.
      const dropped = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      for (const f of ${JSON.stringify(files)}) transfer.items.add(new File([f.text], f.name, { type: 'text/markdown' }));
      return transfer;
    })()`);
      await page.dispatchEvent('.drop-zone', 'drop', { dataTransfer: dropped });
      await expect
        .poll(() => page.locator('.uploads li').allTextContents(), { timeout: 30_000 })
        .toEqual([expect.stringMatching(/^pump-guide\.mdcreated: \d+ chunks?$/), expect.stringMatching(/^recipes\.mdcreated: \d+ chunks?$/)]);
      for (const bar of await page.locator('.uploads progress').all()) expect(await bar.getAttribute('value')).toBe(await bar.getAttribute('max'));
      // Sent as jobs and followed: each file has its ingestion bar (full, above), and its job succeeded.
      expect(await page.getByLabel('Ingestion of pump-guide.md').count()).toBe(1);
      expect(await page.locator('.uploads progress.ingestion').count()).toBe(2);
      const jobs = await ctx.jobQueue.stores.forTenant('acme').list({ kind: 'ingest', limit: 10 });
      expect(jobs.items.map((j) => j.status)).toEqual(['succeeded', 'succeeded']);
      await page.getByRole('link', { name: 'pump-guide' }).waitFor();
      expect(await page.getByRole('row', { name: /pump-guide/ }).textContent()).toContain('manual');
      await page.getByRole('link', { name: 'pump-guide' }).click();
      await page.getByRole('list', { name: 'Chunks of pump-guide' }).waitFor();
      expect(await page.locator('.chunk .heading-path').allTextContents()).toContain('Pumps › Priming');
      expect(await page.locator('.chunk-meta').first().textContent()).toMatch(/characters \d+–\d+/);
      await shoot(page, '05-documents');

      // Chat, extractive (no LLM): the streamed answer cites the guide; its [n] opens the chunk, quotes marked.
      await page.getByRole('link', { name: 'Chat' }).click();
      await page.getByLabel('Message').fill('How do I prime the centrifugal pump?');
      await page.getByLabel('Message').press('Enter');
      await page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor({ timeout: 60_000 });
      expect(await page.locator('.turn .who').nth(1).textContent()).toBe('Agent (extractive)');
      const citation = page.getByRole('button', { name: /^Source \d+: pump-guide › Pumps › Priming$/ }).first();
      await citation.click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await dialog.locator('.chunk.cited mark').first().waitFor();
      expect(await dialog.locator('.chunk.cited mark').first().textContent()).toContain('Prime the centrifugal pump');
      expect(await page.evaluate("document.activeElement.classList.contains('cited')")).toBe(true);
      await shoot(page, '06-chat-citation');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await expect.poll(() => page.locator('.conversations li').count()).toBe(1);
      await shoot(page, '07-chat');

      // The search playground: mode, reranker, candidateK, topK and each hit's ranks.
      await page.getByRole('link', { name: 'Search' }).click();
      await page.getByRole('searchbox', { name: 'Query' }).fill('centrifugal pump');
      await page.getByLabel('Reranker').selectOption('lexical');
      await page.getByLabel('candidateK').fill('20');
      await page.getByLabel('topK').fill('3');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page
        .getByRole('status')
        .filter({ hasText: /hits in \d+ ms/ })
        .waitFor();
      const firstHit = await page.locator('table tbody tr').first().locator('td').allTextContents();
      expect(firstHit[1]).toContain('pump-guide');
      expect(firstHit[6]).not.toBe('–');
      await shoot(page, '08-search');

      // Agents: create, edit (a new version), versions.
      await page.getByRole('link', { name: 'Agents' }).click();
      await page.getByRole('button', { name: 'New agent' }).click();
      await page.getByLabel('Id (optional; the agentId of its memories)').fill('support');
      await page.getByLabel('Name').fill('Support bot');
      await page.getByRole('button', { name: 'Save agent' }).click();
      await page.getByRole('row', { name: /Support bot/ }).waitFor();
      await page.getByRole('button', { name: 'Edit Support bot' }).click();
      await page.getByLabel('Instructions').fill('Answer in one sentence.');
      await page.getByRole('button', { name: 'Save agent' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved Support bot: version 2' }).waitFor();
      await page.getByRole('button', { name: 'Versions of Support bot' }).click();
      // The list comes from a request: wait for both entries before reading them.
      await page.locator('.versions > li > strong').nth(1).waitFor();
      expect(await page.locator('.versions > li > strong').allTextContents()).toEqual(['Version 2', 'Version 1']);
      await shoot(page, '09-agents');

      // Delete by tag, after a confirmation that names the count.
      await page.getByRole('link', { name: 'Memories' }).click();
      await page.getByRole('button', { name: 'Delete the memories tagged drinks' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete by tag' });
      expect(await confirm.locator('p').textContent()).toBe('Delete 1 memory tagged “drinks”? This cannot be undone.');
      await shoot(page, '10-delete-by-tag');
      await confirm.getByRole('button', { name: 'Delete 1' }).click();
      await page.getByRole('status').filter({ hasText: 'Deleted 1 memory tagged drinks' }).waitFor();
      await expect.poll(() => page.locator('.tag-list li').allTextContents()).toEqual([expect.stringMatching(/^ada \(1\)/)]);
      expect(await memoryRows.count()).toBe(1);

      // Keyboard: the first Tab reaches the skip link, which moves the focus to the content.
      await page.evaluate('document.activeElement.blur()');
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
      await page.keyboard.press('Enter');
      expect(await page.evaluate('document.activeElement.id')).toBe('main');

      // A phone's width: still one column that does not scroll sideways.
      await page.setViewportSize({ width: 390, height: 844 });
      for (const [name, link] of [
        ['11-phone-memories', 'Memories'],
        ['12-phone-documents', 'Documents'],
        ['13-phone-chat', 'Chat'],
      ] as const) {
        await page.getByRole('link', { name: link }).click();
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        expect(await sidewaysOverflow(page), name).toEqual([]);
        await shoot(page, name);
      }

      expect(errors).toEqual([]);
      await page.close();
    });
  });
}
