import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { SCREENSHOTS, openPage, shoot, sidewaysOverflow } from './support/console-page.js';
import { type HeadlessChromium, hasChromium, launchChromium } from './support/headless-chromium.js';

// In CI a missing browser is a failure (.ci/run installs Debian's chromium); elsewhere the test is skipped.
const runs = hasChromium || process.env.CI === 'true';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const CONVERSATIONS = 8;

/**
 * Where the message box is on the page as first shown (scrolled to the top): its bottom edge and
 * the window's height. A string: it runs in the page, and this project's typecheck has no DOM types.
 */
async function messageBoxOnFirstScreen(page: Page): Promise<{ bottom: number; height: number }> {
  return page.evaluate(`(() => {
    window.scrollTo(0, 0);
    const box = document.getElementById('chat-message').getBoundingClientRect();
    return { bottom: Math.ceil(box.bottom + window.scrollY), height: window.innerHeight };
  })()`);
}

/** The table region's overflow, whether it scrolls its table sideways, and whether it fits the window. */
async function tableRegion(page: Page): Promise<{ overflowX: string; scrolls: boolean; fits: boolean }> {
  return page.evaluate(`(() => {
    const region = document.querySelector('main .table-scroll');
    return {
      overflowX: getComputedStyle(region).overflowX,
      scrolls: region.scrollWidth > region.clientWidth,
      fits: region.getBoundingClientRect().right <= window.innerWidth,
    };
  })()`);
}

describe.runIf(runs)('the console at a phone’s width and on a desktop, in headless Chromium', () => {
  let browser: HeadlessChromium;
  let ctx: AppContext;
  let server: ListeningServer;
  beforeAll(async () => {
    browser = await launchChromium();
    ctx = await createTestContext();
    server = await listen(createApp(ctx));
    const content =
      'The household archive keeps every renovation invoice, warranty card and appliance manual in labelled folders, ' +
      'sorted by room and then by year, so that a claim can be made without searching the whole attic first.';
    for (const key of ['kitchen-renovation-budget', 'warranty_cards.appliances']) {
      expect((await server.send('PUT', `/v1/memories/${key}?userId=carol`, { content, tags: ['archive', 'household'] })).status).toBe(201);
    }
    const manual = { title: 'Dishwasher installation and maintenance manual', text: '# Dishwasher\n\nClean the filter every week.', format: 'markdown' };
    expect((await server.send('POST', '/v1/documents', manual)).status).toBe(201);
    // Enough conversations that the list, each row with its Export button, is taller than a phone's screen.
    for (let i = 1; i <= CONVERSATIONS; i++) {
      expect((await server.send('POST', '/v1/chat', { message: `Where is invoice number ${i} of the renovation kept?` })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.close();
    await ctx?.close();
    await browser?.close();
  });

  for (const [name, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    it(`puts the chat's message box on the first screen, the conversations a click away, on a ${name}`, async () => {
      const { page, errors } = await openPage(browser);
      await page.setViewportSize(viewport);
      await page.goto(`${server.base}/console#/chat`);
      await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
      const conversations = page.locator('.conversations li');
      await expect.poll(() => conversations.count()).toBe(CONVERSATIONS);
      const { bottom, height } = await messageBoxOnFirstScreen(page);
      expect(bottom).toBeLessThanOrEqual(height);
      expect(await sidewaysOverflow(page)).toEqual([]);
      await shoot(page, `phone-chat-${viewport.width}`);

      // Each conversation can still be reached: on a phone behind a button, on a desktop beside the chat.
      const toggle = page.getByRole('button', { name: `Show ${CONVERSATIONS} conversations` });
      if (name === 'phone') {
        expect(await conversations.first().isVisible()).toBe(false);
        expect(await toggle.getAttribute('aria-expanded')).toBe('false');
        await toggle.click();
        expect(await page.getByRole('button', { name: 'Hide the list' }).getAttribute('aria-expanded')).toBe('true');
        // The screen as seen, not the whole page: a full-page shot stretches the window, and the
        // message box, which sticks to the window's bottom edge, then covers the chat's heading.
        await page.screenshot({ path: join(SCREENSHOTS, `phone-chat-${viewport.width}-list.png`) });
      } else expect(await toggle.isVisible()).toBe(false);
      expect(await conversations.first().isVisible()).toBe(true);
      await conversations.first().getByRole('button').first().click();
      await page
        .getByRole('status')
        .filter({ hasText: /^Opened / })
        .waitFor();
      // On a phone the list folds again over the conversation opened, the focus on the button that unfolds it.
      expect(await conversations.first().isVisible()).toBe(name === 'desktop');
      expect(await page.evaluate('document.activeElement.textContent')).toBe(
        name === 'phone' ? `Show ${CONVERSATIONS} conversations` : 'Where is invoice number 8 of the renovation kept?',
      );
      expect(errors).toEqual([]);
      await page.close();
    });

    it(`scrolls the memories and documents tables inside their regions rather than clipping them, on a ${name}`, async () => {
      const { page, errors } = await openPage(browser);
      await page.setViewportSize(viewport);
      for (const [link, caption] of [
        ['Memories', 'All memories (page 1)'],
        ['Documents', 'Documents'],
      ] as const) {
        await page.goto(`${server.base}/console#/${link.toLowerCase()}`);
        await page.getByRole('table', { name: caption }).locator('tbody tr').first().waitFor();
        const region = await tableRegion(page);
        expect(region, link).toMatchObject({ overflowX: 'auto', fits: true });
        // A phone is narrower than either table: the region scrolls it, rather than the page cutting it off.
        if (name === 'phone') expect(region.scrolls, link).toBe(true);
        // Said above it while it scrolls (columns past the edge looked cut off), and as the region's description.
        const hint = page.getByText('Scroll sideways for the other columns.');
        expect(await hint.isVisible(), link).toBe(region.scrolls);
        if (region.scrolls) expect(await page.getByRole('region', { name: caption }).getAttribute('aria-describedby')).toBe(await hint.getAttribute('id'));
        expect(await sidewaysOverflow(page), link).toEqual([]);
        await shoot(page, `phone-${link.toLowerCase()}-${viewport.width}`);
      }
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});
