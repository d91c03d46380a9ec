import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/app-context.js';
import { reply, type ScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, createTestContext } from '../../http/http-test-context.js';
import { type ListeningServer, listen } from '../../robustness/support/listening-server.js';
import { openPage, shoot } from './console-page.js';
import type { HeadlessChromium } from './headless-chromium.js';

/** A chat whose agent asks before deleting: the approval buttons and what streams after. Registered inside the headless Chromium suite, which owns the browser. */
export function consoleApprovalCases(browser: () => HeadlessChromium) {
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
      const { page, errors } = await openPage(browser());
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
}
