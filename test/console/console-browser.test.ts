import { mkdir, readFile, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { reply } from '../../testkit/scripted-llm-server.js';
import type { ScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, createApp, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { SCREENSHOTS, openPage, shoot, sidewaysOverflow } from './support/console-page.js';
import { type HeadlessChromium, hasChromium, launchChromium } from './support/headless-chromium.js';

// In CI a missing browser is a failure (.ci/run installs Debian's chromium); elsewhere the test is skipped.
const runs = hasChromium || process.env.CI === 'true';
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

describe.runIf(runs)('the console in headless Chromium', () => {
  let browser: HeadlessChromium;
  beforeAll(async () => {
    await rm(SCREENSHOTS, { recursive: true, force: true });
    await mkdir(SCREENSHOTS, { recursive: true });
    console.log(`console screenshots: ${SCREENSHOTS}`);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

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
      const { page, errors } = await openPage(browser);
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

  describe('with a (scripted) LLM whose agent asks before deleting', () => {
    let ctx: AppContext;
    let llm: ScriptedLlmServer;
    let server: ListeningServer;
    beforeAll(async () => {
      ctx = await createTestContext();
      const made = await appWithScriptedLlm(ctx, [
        reply.toolCalls([{ id: 'del', name: 'delete_memory', arguments: '{"key":"old"}' }]),
        reply.text('Forgotten.'),
      ]);
      llm = made.llm;
      server = await listen(made.app);
      // delete_memory waits for approval by default, for an agent that exists.
      expect((await server.send('POST', '/v1/agents', { id: 'careful', name: 'Careful' })).status).toBe(201);
      expect((await server.send('POST', '/v1/memories?agentId=careful', { key: 'old', content: 'An old fact' })).status).toBe(201);
    });
    afterAll(async () => {
      await server?.close();
      await llm?.close();
      await ctx?.close();
    });

    it('shows the paused tool call with approve and deny buttons, and streams the rest once approved', async () => {
      const { page, errors } = await openPage(browser);
      await page.goto(`${server.base}/console#/chat`);
      await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
      await page.getByRole('textbox', { name: 'Agent' }).fill('careful');
      await page.getByRole('textbox', { name: 'Agent' }).press('Tab');
      await page.getByLabel('Message').fill('Forget the old fact');
      await page.getByRole('button', { name: 'Send' }).click();
      const approvals = page.getByRole('region', { name: 'Approvals' });
      await approvals.waitFor();
      expect(await approvals.textContent()).toContain('delete_memory({"key":"old"})');
      await shoot(page, '14-chat-approval');
      await approvals.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor();
      expect(await page.locator('.answer').textContent()).toBe('Forgotten.');
      expect(await page.locator('.activity').textContent()).toContain('delete_memory');
      expect((await server.send('GET', '/v1/memories/old?agentId=careful')).status).toBe(404);
      await shoot(page, '15-chat-approved');
      expect(errors).toEqual([]);
      await page.close();
    });
  });

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
      const { page, errors } = await openPage(browser);
      await page.goto(`${server.base}/console`);
      await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();
      expect(await page.getByText('keyless', { exact: true }).isVisible()).toBe(true);
      expect(await page.getByLabel('API key').count()).toBe(0);
      await shoot(page, '00-keyless');
      expect(errors).toEqual([]);
      await page.close();
    });

    it('focuses the new memory editor as it appears, so what is typed at once stays in the key field', async () => {
      const { page, errors } = await openPage(browser);
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
      const { page, errors } = await openPage(browser);
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
      const { page, errors } = await openPage(browser);
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
});
