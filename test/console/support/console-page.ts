import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { onTestFailed } from 'vitest';
import { type HeadlessChromium, traceRequests, watchPageErrors } from './headless-chromium.js';

export const SCREENSHOTS = process.env.CONSOLE_SCREENSHOT_DIR ?? join(tmpdir(), 'memrag-console-screenshots');

/**
 * A new page whose errors are collected; should the test fail (a timeout says only what it waited
 * for), its screenshot, status line, errors and requests are written out to say why.
 */
export async function openPage(browser: HeadlessChromium): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.context.newPage();
  const errors = await watchPageErrors(page);
  const requests = traceRequests(page);
  onTestFailed(async ({ task }) => {
    const name = `failed-${task.name.slice(0, 40).replace(/\W+/g, '-')}`;
    await shoot(page, name).catch(() => undefined);
    const status = await page
      .getByRole('status')
      .allTextContents()
      .catch(() => []);
    console.error(
      `${task.name} failed; screenshot ${name}.png\nstatus lines: ${JSON.stringify(status)}\n` +
        `page errors:\n${errors.join('\n') || '(none)'}\nrequests:\n${requests.report()}`,
    );
  });
  return { page, errors };
}

export async function shoot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * Whether the page scrolls sideways (at a phone's width nothing should stick out), and if so the
 * elements past the right edge, to say which. A string: it runs in the page, and this project's
 * typecheck has no DOM types.
 */
export async function sidewaysOverflow(page: Page): Promise<string[]> {
  return page.evaluate(`document.documentElement.scrollWidth <= window.innerWidth ? [] :
    [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
      .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''))`);
}

/**
 * The accessible name and description Chromium computed for the element `selector` finds, from
 * its accessibility tree (what a screen reader is given), not from the DOM.
 */
export async function accessibleNameOf(page: Page, selector: string): Promise<{ name: string; description: string }> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = await cdp.send('DOM.getDocument', { depth: 0 });
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector });
    if (!nodeId) throw new Error(`nothing matches ${selector}`);
    const { nodes } = await cdp.send('Accessibility.getPartialAXTree', { nodeId, fetchRelatives: false });
    const node = nodes[0];
    return { name: String(node?.name?.value ?? ''), description: String(node?.description?.value ?? '') };
  } finally {
    await cdp.detach();
  }
}
