import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { RunOptions } from 'axe-core';
import type { Page } from 'playwright-core';

/** axe-core's rules for WCAG 2.0, 2.1 and 2.2 at levels A and AA, and its best practices. */
export const WCAG_A_AA: RunOptions = {
  runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
};

const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core run on the page as it is: what it finds wrong, one entry each (rule, impact, help, then
 * each node's selector and what to fix). What axe could not decide counts too ("needs review"),
 * except contrast over a background it cannot see (text under another element, or scrolled sideways
 * out of a table's region at a phone's width). Evaluated through the DevTools protocol, which
 * the console's CSP (script-src 'self') does not govern, once per document.
 */
export async function axeFindings(page: Page, options: RunOptions = WCAG_A_AA): Promise<string[]> {
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(await AXE_SOURCE);
  const found: { id: string; impact: string; help: string; nodes: { target: string[]; failureSummary?: string }[] }[] = await page.evaluate(
    `axe.run(document, ${JSON.stringify(options)}).then((results) => [
      ...results.violations,
      ...results.incomplete.filter((r) => r.id !== 'color-contrast').map((r) => ({ ...r, id: r.id + ', needs review' })),
    ].map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })) })))`,
  );
  return found.map(
    ({ id, impact, help, nodes }) =>
      `${id} (${impact}): ${help}${nodes.map((n) => `\n  ${n.target.join(' ')}: ${n.failureSummary?.replace(/\s+/g, ' ') ?? ''}`).join('')}`,
  );
}
