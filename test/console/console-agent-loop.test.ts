import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { type ScriptedReply, type ScriptedLlmServer, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { createApp, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { axeFindings } from './support/axe-findings.js';
import { openPage, shoot, sidewaysOverflow } from './support/console-page.js';
import { type HeadlessChromium, hasChromium, launchChromium } from './support/headless-chromium.js';

// In CI a missing browser is a failure (.ci/run installs Debian's chromium); elsewhere the test is skipped.
const runs = hasChromium || process.env.CI === 'true';

/** A 1×1 PNG: real magic bytes, which the API checks. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

function deferred(): { promise: Promise<void>; release: () => void } {
  let release = () => {};
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

/** The message's content as the model got it: a string, or OpenAI content parts. */
type WireContent = string | { type: string; text?: string; image_url?: { url: string } }[];

interface ScriptedApp {
  ctx: AppContext;
  llm: ScriptedLlmServer;
  server: ListeningServer;
  close(): Promise<void>;
}

/** The app behind a listening server, its model the scripted one answering `script` in order (a request past it fails loudly: 500). */
async function scriptedApp(script: ScriptedReply[], env: Record<string, string> = {}): Promise<ScriptedApp> {
  const llm = await startScriptedLlmServer(() => script.shift() ?? reply.error(500, { message: 'no scripted reply left' }), { models: ['model-a', 'model-b'] });
  const ctx = await createTestContext({ LLM_BASE_URL: llm.url, LLM_API_KEY: 'test-key', LLM_MODEL: 'test-model', ...env });
  const model = createLlmProvider({ baseURL: llm.url, apiKey: 'test-key', model: 'test-model', retry: { maxAttempts: 1 } });
  const server = await listen(createApp({ ...ctx, llm: model }));
  return {
    ctx,
    llm,
    server,
    close: async () => {
      await server.close();
      await llm.close();
      await ctx.close();
    },
  };
}

describe.runIf(runs)('the console and the agent loop, in headless Chromium with a scripted model', () => {
  let browser: HeadlessChromium;
  let app: ScriptedApp;
  let llm: ScriptedLlmServer;
  let server: ListeningServer;
  // Each test scripts the replies it needs.
  const script: ScriptedReply[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    // Port 9 (discard) refuses: a provider that cannot be asked for its models.
    app = await scriptedApp(script, { LLM_PROVIDERS: JSON.stringify({ broken: { baseURL: 'http://127.0.0.1:9/v1' } }) });
    ({ llm, server } = app);
  });
  afterAll(async () => {
    await app?.close();
    await browser?.close();
  });

  async function openChat(): Promise<{ page: Page; errors: string[] }> {
    const opened = await openPage(browser);
    await opened.page.goto(`${server.base}/console#/chat`);
    await opened.page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    return opened;
  }

  async function ask(page: Page, text: string): Promise<void> {
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
  }

  const answerComplete = (page: Page) => page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor();

  it('folds the model’s reasoning, as it streams, under the answer and never into it', async () => {
    // Slow chunks: the reasoning is on the page while the turn still runs.
    script.push(
      reply.text('Green tea, every morning.', { reasoning: 'The memories say nothing; I answer from the question.', chunkSize: 8, chunkDelayMs: 60 }),
    );
    const { page, errors } = await openChat();
    await ask(page, 'What does Ada drink?');
    const turn = page.locator('article.turn').last();
    await turn.locator('details.reasoning').waitFor();
    expect(await turn.getAttribute('aria-busy')).toBe('true');
    await answerComplete(page);
    expect(await turn.locator('.answer').textContent()).toBe('Green tea, every morning.');
    const folded = turn.locator('details.reasoning');
    expect(await folded.getAttribute('open')).toBeNull();
    expect(await folded.locator('summary').textContent()).toBe('Reasoning');
    // Folded, the reasoning is not shown until asked for.
    expect(await folded.locator('p').isVisible()).toBe(false);
    await folded.locator('summary').click();
    expect(await folded.locator('p').textContent()).toBe('The memories say nothing; I answer from the question.');
    // The answer first, its reasoning folded after it: in the order a screen reader reads them too.
    expect(await turn.locator('.answer + details.reasoning').count()).toBe(1);
    expect(await axeFindings(page)).toEqual([]);
    await shoot(page, 'agent-loop-reasoning');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('sends an attached image to the model as an image part, shows it in the message, and again from the attachments route when reopened', async () => {
    script.push(reply.text('A single pixel.'));
    const { page, errors } = await openChat();
    await page.getByLabel('Attach images').setInputFiles({ name: 'pixel.png', mimeType: 'image/png', buffer: PNG });
    await page.getByRole('img', { name: 'pixel.png' }).waitFor();
    const before = llm.requests.length;
    await ask(page, 'What is on this picture?');
    await answerComplete(page);

    const sent = llm.requests[before]!.body.messages.at(-1)!.content as WireContent;
    expect(Array.isArray(sent)).toBe(true);
    // The text part is the question (after the recalled sources); the image goes beside it.
    expect(sent[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/What is on this picture\?$/) });
    expect(sent).toContainEqual(
      expect.objectContaining({ type: 'image_url', image_url: expect.objectContaining({ url: `data:image/png;base64,${PNG.toString('base64')}` }) }),
    );
    const shown = page.locator('article.turn').last().getByRole('list', { name: 'Images' }).getByRole('img');
    expect(await shown.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    // Sent, the composer holds no image any more.
    expect(await page.getByRole('list', { name: 'Attached images' }).count()).toBe(0);

    // Reopened, the stored message names its attachment: fetched with the key, shown from a blob: URL the CSP allows.
    const list = await server.send('GET', '/v1/conversations?agentId=default&limit=5');
    const id: string | undefined = list.body.items.find((c: { title: string }) => c.title.startsWith('What is on this picture'))?.id;
    expect(id).toBeDefined();
    await page.goto(`${server.base}/console#/chat?conversation=${id}`);
    const kept = page.locator('article.turn').first().getByRole('list', { name: 'Images' }).getByRole('img');
    await kept.waitFor();
    await expect.poll(() => kept.getAttribute('src')).toMatch(/^blob:/);
    await expect.poll(() => kept.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);
    await shoot(page, 'agent-loop-image');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refuses an image over 8 MB in the browser, before anything is sent', async () => {
    const { page, errors } = await openChat();
    const big = Buffer.concat([PNG, Buffer.alloc(8 * 1024 * 1024)]);
    await page.getByLabel('Attach images').setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: big });
    await page.getByRole('alert').filter({ hasText: 'huge.png is larger than 8 MB' }).waitFor();
    expect(await page.getByRole('list', { name: 'Attached images' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('posts a steer from the steer box while a reply is held, and the model’s next call reads it', async () => {
    const hold = deferred();
    script.push(reply.text('First thoughts.', { holdUntil: hold.promise }), reply.text('Réponse en français.'));
    const { page, errors } = await openChat();
    const before = llm.requests.length;
    await ask(page, 'Tell me about tea');
    const box = page.getByRole('region', { name: 'Steer the running turn' });
    await box.waitFor();
    await box.getByLabel('Tell the running turn').fill('Answer in French');
    await box.getByRole('button', { name: 'Steer' }).click();
    await page.getByRole('status').filter({ hasText: 'Sent: it joins the turn before its next model call' }).waitFor();
    await shoot(page, 'agent-loop-steer-box');
    hold.release();
    await answerComplete(page);
    // The box goes with the turn it spoke to.
    expect(await box.count()).toBe(0);
    const turn = page.locator('article.turn').last();
    expect(await turn.locator('.answer').textContent()).toContain('Réponse en français.');
    expect(await turn.getByRole('list', { name: 'Tool calls, steering and compaction' }).textContent()).toContain('You steered: “Answer in French”');
    const second = llm.requests[before + 1]!.body.messages;
    expect(second.filter((m) => m.role === 'user').map((m) => m.content)).toContain('Answer in French');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the chat within a phone’s width with an image attached and the steer box shown', async () => {
    const hold = deferred();
    script.push(reply.text('Done.', { holdUntil: hold.promise }));
    const { page, errors } = await openPage(browser);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.base}/console#/chat`);
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    await page.getByLabel('Attach images').setInputFiles({ name: 'a-rather-long-file-name-for-a-phone-screen.png', mimeType: 'image/png', buffer: PNG });
    await ask(page, 'What is this?');
    await page.getByRole('region', { name: 'Steer the running turn' }).waitFor();
    await page.getByLabel('Attach images').setInputFiles({ name: 'second.png', mimeType: 'image/png', buffer: PNG });
    await page.getByRole('img', { name: 'second.png' }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    // The steer box, the question's image and the composer's attached one, as WCAG A and AA want them.
    expect(await axeFindings(page)).toEqual([]);
    await shoot(page, 'agent-loop-phone');
    hold.release();
    await answerComplete(page);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('pauses a running turn from the steer box, then resumes it', async () => {
    const hold = deferred();
    script.push(
      reply.toolCalls([{ id: 'look', name: 'search_memories', arguments: '{"query":"tea"}' }], { holdUntil: hold.promise }),
      reply.text('Resumed: nothing is saved about tea.'),
    );
    const { page, errors } = await openChat();
    await ask(page, 'What about tea?');
    const box = page.getByRole('region', { name: 'Steer the running turn' });
    await box.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('status').filter({ hasText: 'The turn pauses before its next model call' }).waitFor();
    hold.release();
    const resume = page.getByRole('button', { name: 'Resume' });
    await resume.waitFor();
    await page.getByRole('status').filter({ hasText: 'The turn is paused' }).waitFor();
    await shoot(page, 'agent-loop-paused');
    await resume.click();
    await answerComplete(page);
    expect(await page.locator('article.turn').last().locator('.answer').textContent()).toBe('Resumed: nothing is saved about tea.');
    expect(await resume.count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('queues a follow-up from the steer box and shows it as the next turn once the first completes', async () => {
    const hold = deferred();
    script.push(reply.text('Oolong.', { holdUntil: hold.promise }), reply.text('Every morning.'));
    const { page, errors } = await openChat();
    await ask(page, 'Which tea?');
    const box = page.getByRole('region', { name: 'Steer the running turn' });
    await box.getByLabel('Tell the running turn').fill('And when?');
    await box.getByRole('button', { name: 'Follow up' }).click();
    await page.getByRole('list', { name: 'Follow-ups' }).filter({ hasText: 'And when?' }).waitFor();
    hold.release();
    const next = page.locator('article.turn').nth(1);
    await next.locator('.answer').filter({ hasText: 'Every morning.' }).waitFor();
    expect(await next.locator('.question').textContent()).toContain('And when?');
    expect(await page.locator('article.turn').first().locator('.answer').textContent()).toBe('Oolong.');
    // Asked for before the server started it, the follow-up's run is a 404 (the console asks again): Chromium logs each.
    expect(errors.filter((e) => !e.includes('the server responded with a status of 404'))).toEqual([]);
    await page.close();
  });

  it('offers the provider’s models for an agent’s model, keeps a typed one, and survives a provider that cannot be asked', async () => {
    // One agent listed: an empty table is a finding of axe's own, not the form's.
    expect((await server.send('POST', '/v1/agents', { id: 'listed', name: 'Listed' })).status).toBe(201);
    const { page, errors } = await openPage(browser);
    await page.goto(`${server.base}/console#/agents`);
    await page.getByRole('cell', { name: 'Listed', exact: true }).waitFor();
    await page.getByRole('button', { name: 'New agent' }).click();
    const help = page.locator('#agent-models-help');
    await help.filter({ hasText: 'default offers 2 models' }).waitFor();
    expect(await page.locator('datalist#agent-models option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value))).toEqual([
      'model-a',
      'model-b',
    ]);
    expect(await page.getByRole('combobox', { name: /^Model/ }).getAttribute('list')).toBe('agent-models');
    expect(await axeFindings(page)).toEqual([]);

    // A provider that refuses: the suggestions go, the form stays, a typed model is saved.
    await page.getByLabel('Provider').selectOption('broken');
    await help.filter({ hasText: "broken's models could not be listed" }).waitFor();
    expect(await page.locator('datalist#agent-models option').count()).toBe(0);
    await page.getByLabel('Name').fill('Picky');
    await page.getByRole('combobox', { name: /^Model/ }).fill('my-own-model');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByRole('status').filter({ hasText: 'Created Picky' }).waitFor();
    const agents = await server.send('GET', '/v1/agents?limit=10');
    expect(agents.body.items.find((a: { name: string }) => a.name === 'Picky')).toMatchObject({ provider: 'broken', model: 'my-own-model' });
    await shoot(page, 'agent-loop-model-picker');
    // The refused provider's 502, as Chromium logs any failed request; nothing else went wrong.
    expect(errors).toEqual(['console.error: Failed to load resource: the server responded with a status of 502 (Bad Gateway)']);
    await page.close();
  });

  it('shows a kept image to a console signed in with an API key: fetched with the key, which an <img> could not send', async () => {
    const keyed = await scriptedApp([reply.text('A pixel.')], { API_KEYS: 'acme:agent-loop-key' });
    try {
      const { page, errors } = await openPage(browser);
      await page.goto(`${keyed.server.base}/console#/chat`);
      await page.getByLabel('API key').fill('agent-loop-key');
      await page.getByLabel('API key').press('Enter');
      await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
      await page.getByLabel('Attach images').setInputFiles({ name: 'pixel.png', mimeType: 'image/png', buffer: PNG });
      await ask(page, 'And this picture?');
      await answerComplete(page);
      // Opened from the list, the conversation's image comes from its attachments route.
      await page.getByRole('button', { name: 'New conversation' }).click();
      await page.getByRole('button', { name: /^And this picture/ }).click();
      const kept = page.locator('article.turn').first().getByRole('list', { name: 'Images' }).getByRole('img');
      await expect.poll(() => kept.getAttribute('src')).toMatch(/^blob:/);
      await expect.poll(() => kept.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await keyed.close();
    }
  });
});
