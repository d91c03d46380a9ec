import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { axeFindings } from './support/axe-findings.js';
import { accessibleNameOf, openPage, shoot } from './support/console-page.js';
import { type HeadlessChromium, hasChromium, launchChromium } from './support/headless-chromium.js';

// In CI a missing browser is a failure (.ci/run installs Debian's chromium); elsewhere the test is skipped.
const runs = hasChromium || process.env.CI === 'true';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/**
 * The words (runs of letters and digits) of the given columns of the first table that a line
 * break cuts in two: a word laid out on one line has one client rectangle, a broken one two.
 */
async function brokenWords(page: Page, columns: readonly string[]): Promise<string[]> {
  return page.evaluate(`(() => {
    const table = document.querySelector('table');
    const headers = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    const indexes = ${JSON.stringify(columns)}.map((c) => headers.indexOf(c));
    if (indexes.some((i) => i < 0)) throw new Error('no column among ' + headers.join(', '));
    const broken = [];
    for (const row of table.querySelectorAll('tbody tr')) {
      for (const i of indexes) {
        const walker = document.createTreeWalker(row.children[i], NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (const word of node.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {
            const range = document.createRange();
            range.setStart(node, word.index);
            range.setEnd(node, word.index + word[0].length);
            if (range.getClientRects().length > 1) broken.push(word[0]);
          }
        }
      }
    }
    return broken;
  })()`);
}

describe.runIf(runs)('the console’s accessibility in headless Chromium', () => {
  let browser: HeadlessChromium;
  let ctx: AppContext;
  let server: ListeningServer;
  beforeAll(async () => {
    browser = await launchChromium();
    ctx = await createTestContext();
    server = await listen(createApp(ctx));
  });
  afterAll(async () => {
    await server?.close();
    await ctx?.close();
    await browser?.close();
  });

  it('names the Agent field “Agent” alone, its help text being its description', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.base}/console`);
    await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();
    const field = page.getByRole('textbox', { name: 'Agent', exact: true });
    expect(await field.count()).toBe(1);
    expect(await accessibleNameOf(page, 'header.top input')).toEqual({
      name: 'Agent',
      description: 'Memories, conversations and chats are those of this agent id.',
    });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('names the User field “User” alone, its help text being its description', async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.base}/console`);
    await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();
    expect(await page.getByRole('textbox', { name: 'User', exact: true }).count()).toBe(1);
    expect(await accessibleNameOf(page, 'header.top #user-id')).toEqual({
      name: 'User',
      description:
        "Memories, conversations and chats are this user's, beside the agent's shared memories. Empty: new memories and chats are shared, and the lists show every user's.",
    });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lets the keyboard reach and scroll each table that scrolls sideways at a phone’s width', async () => {
    const { page, errors } = await openPage(browser);
    await page.setViewportSize(PHONE);
    await page.goto(`${server.base}/console#/agents`);
    for (const [link, caption] of [
      ['Agents', 'Agents'],
      ['Documents', 'Documents'],
      ['Search', 'Hits'],
      ['Memories', 'All memories (page 1)'],
    ] as const) {
      await page.getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { name: link, level: 1 }).waitFor();
      await page.getByRole('table', { name: caption }).waitFor();
      // Each element that scrolls can be focused or holds something that can: a keyboard scrolls it.
      expect(await axeFindings(page, { runOnly: { type: 'rule', values: ['scrollable-region-focusable'] } }), link).toEqual([]);
      // Every table's scroll container is a named region a Tab stops at.
      expect(await accessibleNameOf(page, 'main .table-scroll')).toMatchObject({ name: caption });
      expect(await page.locator('main .table-scroll').getAttribute('tabindex')).toBe('0');
    }

    // The agents table is wider than a phone even empty: from the keyboard alone, it scrolls.
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    const region = page.getByRole('region', { name: 'Agents' });
    await region.waitFor();
    const scrolling = "document.querySelector('main .table-scroll')";
    expect(await page.evaluate(`${scrolling}.scrollWidth > ${scrolling}.clientWidth`)).toBe(true);
    await region.focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.evaluate(`${scrolling}.scrollLeft`)).toBeGreaterThan(0);
    await shoot(page, 'a11y-phone-agents');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('breaks memory keys and tags only between words, on a wide screen and on a phone', async () => {
    const content =
      'The household archive keeps every renovation invoice, warranty card and appliance manual in labelled folders, ' +
      'sorted by room and then by year, so that a claim can be made without searching the whole attic first. ' +
      'Receipts older than seven years are scanned before they are shredded, and the scans are kept beside the folders.';
    for (const [key, tags] of [
      ['kitchen-renovation-budget', ['archive', 'household', 'renovation-plans']],
      ['archive', ['archive', 'paperwork']],
      ['warranty_cards.appliances', ['household', 'warranties']],
    ] as const) {
      expect((await server.send('PUT', `/v1/memories/${key}`, { content, tags })).status).toBe(201);
    }
    const { page, errors } = await openPage(browser);
    for (const viewport of [{ width: 1280, height: 800 }, { width: 900, height: 800 }, PHONE]) {
      await page.setViewportSize(viewport);
      await page.goto(`${server.base}/console#/memories`);
      await expect.poll(() => page.locator('table tbody tr').count()).toBe(3);
      expect(await brokenWords(page, ['Key', 'Tags']), `at ${viewport.width} px`).toEqual([]);
      await shoot(page, `a11y-memories-${viewport.width}`);
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('passes axe’s WCAG 2 A and AA rules and best practices on each page, with content, on a phone and on a desktop', async () => {
    expect((await server.send('POST', '/v1/agents', { id: 'scanned', name: 'Scanned' })).status).toBe(201);
    for (const [key, content, tags] of [
      ['kettle-care', 'Ada descales the kettle with vinegar every month', ['kitchen', 'appliances']],
      ['tea', 'Ada drinks green tea every morning', ['kitchen']],
    ] as const) {
      expect((await server.send('PUT', `/v1/memories/${key}?agentId=scanned`, { content, tags })).status).toBe(201);
    }
    const kettle = { title: 'Kettle', text: '# Kettle\n\nDescale the kettle with vinegar every month.', format: 'markdown' };
    expect((await server.send('POST', '/v1/documents', kettle)).status).toBe(201);

    const { page, errors } = await openPage(browser);
    const failures: string[] = [];
    const scan = async (where: string) => failures.push(...(await axeFindings(page)).map((v) => `${where}: ${v}`));
    const open = async (link: string) => {
      await page.getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { name: link, level: 1 }).waitFor();
    };
    for (const viewport of [PHONE, DESKTOP]) {
      const at = `at ${viewport.width} px`;
      await page.setViewportSize(viewport);
      await page.goto(`${server.base}/console#/agents`);
      await page.getByRole('button', { name: 'Use Scanned in memories and chat' }).click();
      await scan(`agents ${at}`);

      await open('Documents');
      await page.getByRole('cell', { name: 'Kettle', exact: true }).waitFor();
      await scan(`documents ${at}`);

      await open('Search');
      await page.getByRole('searchbox', { name: 'Query' }).fill('descale the kettle');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByRole('table', { name: 'Hits' }).locator('tbody tr').first().waitFor();
      await scan(`search ${at}`);

      // The memories of the agent picked on the agents page, one open in the editor.
      await open('Memories');
      await page.getByRole('button', { name: 'Edit kettle-care' }).click();
      await page.getByRole('region', { name: 'Edit memory kettle-care' }).locator('.history li').first().waitFor();
      await scan(`memories ${at}`);

      // A cited answer, then the citation's dialog.
      await open('Chat');
      await page.getByLabel('Message').fill('How do I descale the kettle?');
      await page.getByLabel('Message').press('Enter');
      await page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor();
      await scan(`chat ${at}`);
      // On a phone the conversations are folded behind a button: scanned unfolded too.
      if (viewport === PHONE) {
        await page.getByRole('button', { name: /^Show \d+ conversations?$/ }).click();
        await page.locator('.conversations li').first().waitFor();
        await scan(`chat's unfolded conversations ${at}`);
      }
      // The second pass's answer may cite the first pass's turn: whichever source comes last.
      await page
        .getByRole('button', { name: /^Source \d+: / })
        .last()
        .click();
      await page.getByRole('dialog').waitFor();
      await scan(`chat's citation dialog ${at}`);
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'hidden' });
      await shoot(page, `a11y-axe-chat-${viewport.width}`);
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
