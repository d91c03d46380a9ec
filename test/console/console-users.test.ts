import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { openPage, shoot } from './support/console-page.js';
import { type HeadlessChromium, hasChromium, launchChromium } from './support/headless-chromium.js';

// In CI a missing browser is a failure (.ci/run installs Debian's chromium); elsewhere the test is skipped.
const runs = hasChromium || process.env.CI === 'true';

/** The header's User field; a change applies when the field is left, as the Agent field's does. */
async function actAs(page: Page, userId: string): Promise<void> {
  const field = page.getByRole('textbox', { name: 'User', exact: true });
  await field.fill(userId);
  await field.press('Tab');
}

/** Each row's key and user, the memories table's first two columns. */
async function keysAndUsers(page: Page): Promise<string[]> {
  const rows = await page.locator('table tbody tr').all();
  return Promise.all(rows.map(async (row) => `${await row.locator('td').nth(0).textContent()} / ${await row.locator('td').nth(1).textContent()}`));
}

describe.runIf(runs)('the console as one user or another, in headless Chromium', () => {
  let browser: HeadlessChromium;
  let ctx: AppContext;
  let server: ListeningServer;
  beforeAll(async () => {
    browser = await launchChromium();
    ctx = await createTestContext();
    server = await listen(createApp(ctx));
    for (const [path, content] of [
      ['/v1/memories/pet?userId=carol', 'Carol has a cat called Biscuit'],
      ['/v1/memories/pet?userId=dave', 'Dave has a dog called Rex'],
      ['/v1/memories/office', 'The office opens at nine'],
    ] as const) {
      expect((await server.send('PUT', path, { content, tags: ['home'] })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await server?.close();
    await ctx?.close();
    await browser?.close();
  });

  it("lists, edits and creates Carol's memories as hers, with their history, the user kept across pages and reloads", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.base}/console`);
    await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();
    // No user: every user's memories, each row naming whose it is.
    await expect.poll(() => keysAndUsers(page).then((rows) => rows.sort())).toEqual(['office / shared', 'pet / carol', 'pet / dave']);

    // Carol: hers and the shared ones, as her chat recalls them.
    await actAs(page, 'carol');
    await expect.poll(() => keysAndUsers(page).then((rows) => rows.sort())).toEqual(['office / shared', 'pet / carol']);
    expect(await page.locator('caption').textContent()).toBe('Memories of carol and shared (page 1)');

    // Her memory's history is hers (a request without the user found none), and an edit changes hers.
    await page.getByRole('button', { name: 'Edit pet of carol' }).click();
    const editor = page.getByRole('region', { name: 'Edit memory pet of carol' });
    await expect
      .poll(() => editor.locator('.history li').allTextContents())
      .toEqual([expect.stringMatching(/created by api: Carol has a cat called Biscuit \[home\]$/)]);
    await shoot(page, 'users-01-carol-history');
    await editor.getByLabel('Content').fill('Carol has a cat called Biscuit and a hamster');
    await editor.getByRole('button', { name: 'Save memory' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved pet' }).waitFor();
    expect((await server.send('GET', '/v1/memories/pet?userId=carol')).body.memory.content).toBe('Carol has a cat called Biscuit and a hamster');
    expect((await server.send('GET', '/v1/memories/pet')).status).toBe(404);
    expect((await server.send('GET', '/v1/memories/pet?userId=dave')).body.memory.content).toBe('Dave has a dog called Rex');

    // A new memory is the header user's unless the editor says otherwise.
    await page.getByRole('button', { name: 'New memory' }).click();
    const user = page.getByLabel('Its user (empty: shared by every user)');
    expect(await user.inputValue()).toBe('carol');
    await page.getByLabel('Key (optional: one is made up when left empty)').fill('tea');
    await page.getByLabel('Content').fill('Carol drinks mint tea');
    await page.getByRole('button', { name: 'Save memory' }).click();
    // The editor closes once this save is acknowledged: the status alone could be the last one's.
    await page.getByRole('button', { name: 'Save memory' }).waitFor({ state: 'hidden' });
    await page.getByRole('status').filter({ hasText: 'Memory saved' }).waitFor();
    expect((await server.send('GET', '/v1/memories/tea?userId=carol')).body.memory.userId).toBe('carol');
    await page.getByRole('button', { name: 'New memory' }).click();
    await user.fill('');
    await page.getByLabel('Key (optional: one is made up when left empty)').fill('canteen');
    await page.getByLabel('Content').fill('The canteen serves soup on Fridays');
    await page.getByRole('button', { name: 'Save memory' }).click();
    // The editor closes once this save is acknowledged: the status alone could be the last one's.
    await page.getByRole('button', { name: 'Save memory' }).waitFor({ state: 'hidden' });
    await page.getByRole('status').filter({ hasText: 'Memory saved' }).waitFor();
    expect((await server.send('GET', '/v1/memories/canteen')).body.memory.userId).toBeNull();
    await expect.poll(() => keysAndUsers(page).then((rows) => rows.sort())).toEqual(['canteen / shared', 'office / shared', 'pet / carol', 'tea / carol']);
    await shoot(page, 'users-02-carol-memories');

    // Kept across pages and a reload.
    await page.getByRole('link', { name: 'Documents' }).click();
    await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
    await page.reload();
    await page.getByRole('link', { name: 'Memories' }).click();
    expect(await page.getByRole('textbox', { name: 'User', exact: true }).inputValue()).toBe('carol');
    await expect.poll(() => keysAndUsers(page).then((rows) => rows.length)).toBe(4);

    // Back to no user: every user's again.
    await actAs(page, '');
    await expect.poll(() => keysAndUsers(page).then((rows) => rows.length)).toBe(5);
    expect(await page.evaluate("localStorage.getItem('memrag.userId')")).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  });

  it("chats as the header's user, and continues a listed conversation as the user it is with", async () => {
    const dave = await server.send('POST', '/v1/chat', { message: 'What is my dog called?', userId: 'dave' });
    expect(dave.status).toBe(200);
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.base}/console#/chat`);
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();

    // As Carol: her conversation, recalling her memories and not Dave's.
    await actAs(page, 'carol');
    await expect.poll(() => page.locator('.conversations li').count()).toBe(0);
    await page.getByLabel('Message').fill('What is the name of my cat?');
    await page.getByLabel('Message').press('Enter');
    await page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor();
    expect(await page.locator('.turn .answer').textContent()).toContain('Biscuit');
    expect(await page.locator('.turn .answer').textContent()).toContain('[1]');
    expect(await page.locator('.turn .answer').textContent()).not.toContain('Rex');
    const carols = await server.send('GET', '/v1/conversations?userId=carol');
    expect(carols.body.items).toHaveLength(1);
    await expect.poll(() => page.locator('.conversations li').count()).toBe(1);
    await shoot(page, 'users-03-chat-as-carol');

    // Her memory, cited, opens as hers (the citation names no user), and so does its link to the memories page.
    await page.getByRole('button', { name: 'Source 1: memory pet' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.locator('blockquote').waitFor();
    expect(await dialog.locator('blockquote').textContent()).toBe('Carol has a cat called Biscuit and a hamster');
    await dialog.getByRole('link', { name: 'Open in Memories' }).click();
    await page.getByRole('region', { name: 'Edit memory pet of carol' }).waitFor();
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();

    // No user: every user's conversations; Dave's, continued, stays his (continued without his id, it would 404).
    await actAs(page, '');
    await expect.poll(() => page.locator('.conversations li').count()).toBe(2);
    const daves = page.locator('.conversations li').filter({ hasText: 'with dave' });
    await daves.getByRole('button', { name: /^What is my dog called/ }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Opened / })
      .waitFor();
    await page.getByLabel('Message').fill('And what is the name of my dog?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor();
    expect(await page.locator('.turn .error').count()).toBe(0);
    const conversation = await server.send('GET', `/v1/conversations/${dave.body.conversationId}`);
    expect(conversation.body.conversation).toMatchObject({ userId: 'dave', turnCount: 2 });
    expect(await page.locator('.turn .answer').last().textContent()).toContain('Rex');
    await shoot(page, 'users-04-chat-continued-as-dave');
    expect(errors).toEqual([]);
    await page.close();
  });
});
