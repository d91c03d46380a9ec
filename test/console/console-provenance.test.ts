import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { openPage, shoot } from './support/console-page.js';
import { type HeadlessChromium, hasChromium, launchChromium } from './support/headless-chromium.js';

// In CI a missing browser is a failure (.ci/run installs Debian's chromium); elsewhere the test is skipped.
const runs = hasChromium || process.env.CI === 'true';

const TOLD = 'I moved to Lisbon in March.';
const QUOTE = { text: 'moved to Lisbon', start: 2, end: 17 };

/**
 * The origins the memory `home` is given: the user's words in turn 2 of a stored conversation, a
 * conversation since deleted, an API write and the assistant's tool call. Noon UTC, so that each
 * falls on the same day in the browser's time zone.
 */
function originsOfHome(conversationId: string) {
  return [
    { actor: 'extraction', conversationId, turn: 2, quote: QUOTE, at: '2026-03-03T12:00:00.000Z' },
    { actor: 'extraction', conversationId: '00000000-0000-4000-8000-000000000000', turn: 4, quote: null, at: '2026-03-05T12:00:00.000Z', deleted: true },
    { actor: 'api', conversationId: null, turn: null, quote: null, at: '2026-03-07T12:00:00.000Z' },
    { actor: 'tool', conversationId: null, turn: null, quote: null, at: '2026-03-08T12:00:00.000Z' },
  ];
}

/**
 * Gives the replies `rewrite` edits their provenance, as the API describes it: the server's reply
 * is fetched and passed on with `rewrite` applied to its body. The chat's stream is rewritten event
 * by event (its `data:` lines).
 */
async function rewriteReplies(page: Page, url: RegExp, rewrite: (body: any) => void): Promise<void> {
  await page.route(url, async (route: Route) => {
    const response = await route.fetch();
    const text = await response.text();
    const isStream = (response.headers()['content-type'] ?? '').includes('text/event-stream');
    const edit = (json: string) => {
      const body = JSON.parse(json);
      rewrite(body);
      return JSON.stringify(body);
    };
    const body = isStream ? text.replace(/^data: (.*)$/gm, (_line, json: string) => `data: ${edit(json)}`) : edit(text);
    await route.fulfill({ response, body });
  });
}

describe.runIf(runs)('provenance in the console, in headless Chromium', () => {
  let browser: HeadlessChromium;
  let ctx: AppContext;
  let llm: ScriptedLlmServer;
  let server: ListeningServer;
  let conversationId: string;
  beforeAll(async () => {
    browser = await launchChromium();
    ctx = await createTestContext();
    const made = await appWithScriptedLlm(ctx, (request) => {
      const last = [...request.body.messages].reverse().find((m) => m.role === 'user');
      return String(last?.content ?? '').includes('Where do I live') ? reply.text('You live in Lisbon [1].') : reply.text('Noted.');
    });
    llm = made.llm;
    server = await listen(made.app);
    const first = await server.send('POST', '/v1/chat', { message: 'Hello there.' });
    expect(first.status).toBe(200);
    conversationId = first.body.conversationId;
    expect((await server.send('POST', '/v1/chat', { message: TOLD, conversationId })).status).toBe(200);
    expect((await server.send('PUT', '/v1/memories/home', { content: 'Ada lives in Lisbon', tags: ['home'] })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.close();
    await llm?.close();
    await ctx?.close();
    await browser?.close();
  });

  it("shows a cited memory's origins, dated and quoted, and opens the conversation at the turn it was drawn from", async () => {
    const { page, errors } = await openPage(browser);
    await rewriteReplies(page, /\/v1\/chat$/, (data) => {
      for (const citation of data.citations ?? []) if (citation.kind === 'memory') citation.sources = originsOfHome(conversationId);
    });
    await page.goto(`${server.base}/console#/chat`);
    await page.getByLabel('Message').fill('Where do I live?');
    await page.getByLabel('Message').press('Enter');
    await page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor();
    await page.getByRole('button', { name: 'Source 1: memory home' }).click();

    const dialog = page.getByRole('dialog');
    const origins = dialog.getByRole('region', { name: 'Where this comes from' }).getByRole('listitem');
    await origins.first().waitFor();
    expect(await origins.allTextContents()).toEqual([
      'You told me this on 3 March 2026: moved to Lisbon Open turn 2 of the conversation',
      'You told me this on 5 March 2026, in a conversation that has since been deleted.',
      'Saved through the API on 7 March 2026.',
      'Saved by the assistant on 8 March 2026.',
    ]);
    expect(await origins.first().locator('q').textContent()).toBe(QUOTE.text);
    expect(await origins.first().locator('time').getAttribute('datetime')).toBe('2026-03-03T12:00:00.000Z');
    // A deleted conversation cannot be opened: no link.
    expect(await origins.nth(1).getByRole('link').count()).toBe(0);
    await shoot(page, 'provenance-chat-citation');

    await origins.first().getByRole('link', { name: 'Open turn 2 of the conversation' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page
      .getByRole('status')
      .filter({ hasText: / at turn 2$/ })
      .waitFor();
    const turn = page.getByRole('article', { name: 'Turn 2' });
    expect(await page.locator('.turn').count()).toBe(2);
    expect(await turn.locator('.question').textContent()).toBe(`You ${TOLD}`);
    expect(await turn.locator('.question mark').textContent()).toBe(QUOTE.text);
    await expect.poll(() => page.evaluate('document.activeElement.getAttribute("aria-label")')).toBe('Turn 2');
    // Read once, the link leaves the address: the conversation list and the same link go on working.
    expect(await page.evaluate('location.hash')).toBe('#/chat');
    await shoot(page, 'provenance-chat-turn');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a memory's first origin and valid time in the memories table, all its origins in the editor, and links to the turn", async () => {
    const { page, errors } = await openPage(browser);
    const withOrigins = (memory: any) => {
      if (memory?.key !== 'home') return;
      memory.sources = originsOfHome(conversationId);
      memory.validFrom = '2026-03-01T12:00:00.000Z';
      memory.validUntil = null;
    };
    await rewriteReplies(page, /\/v1\/memories(\/home)?\?/, (body) => {
      for (const memory of body.items ?? []) withOrigins(memory);
      withOrigins(body.memory);
    });
    await page.goto(`${server.base}/console#/memories`);
    const row = page.getByRole('row', { name: /^home / });
    await row.waitFor();
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells.slice(0, 5)).toEqual([
      'home',
      'shared',
      'Ada lives in LisbonValid from 1 March 2026',
      'home',
      'You told me this on 3 March 2026: moved to Lisbon Open turn 2 of the conversation (and 3 later origins)',
    ]);

    await page.getByRole('button', { name: 'Edit home' }).click();
    const editor = page.getByRole('region', { name: 'Edit memory home' });
    await editor.locator('.origins li').nth(3).waitFor();
    expect(await editor.getByText('Valid from 1 March 2026').count()).toBe(1);
    expect(await editor.locator('.origins li').count()).toBe(4);
    await shoot(page, 'provenance-memories');

    // From another page: the chat opens with the conversation at that turn.
    await row.getByRole('link', { name: 'Open turn 2 of the conversation' }).click();
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: / at turn 2$/ })
      .waitFor();
    expect(await page.getByRole('article', { name: 'Turn 2' }).locator('.question mark').textContent()).toBe(QUOTE.text);
    expect(errors).toEqual([]);
    await page.close();
  });
});
