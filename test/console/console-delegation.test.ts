import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { type ScriptedLlmServer, type ScriptedReply, type ScriptedRequest, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { createApp, createTestContext } from '../http/http-test-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { axeFindings } from './support/axe-findings.js';
import { openPage, shoot, sidewaysOverflow } from './support/console-page.js';
import { type HeadlessChromium, hasChromium, launchChromium } from './support/headless-chromium.js';

// In CI a missing browser is a failure (.ci/run installs Debian's chromium); elsewhere the test is skipped.
const runs = hasChromium || process.env.CI === 'true';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/**
 * Each agent's instructions carry its mark, so that the scripted model answers a request by the
 * agent whose system message it is: a lead and the agents it delegates to each have a script.
 */
const MARK = (id: string) => `[INSTRUCTIONS-OF-${id.toUpperCase()}]`;
const systemOf = (request: ScriptedRequest) => String(request.body.messages.find((m) => m.role === 'system')?.content ?? '');
const delegateCall = (id: string, role: string, task: string) => ({ id, name: 'delegate', arguments: JSON.stringify({ role, task }) });

type Step = ScriptedReply | ((request: ScriptedRequest) => ScriptedReply);

/**
 * axe's findings from a fresh copy of axe: a second run in the same document reuses what the first
 * found of the headings (their places among their siblings), and a line inserted since (the table's
 * scroll hint at a phone's width) then leaves each heading "needs review" with no previous heading.
 */
async function freshAxeFindings(page: Page): Promise<string[]> {
  await page.evaluate('delete window.axe');
  return axeFindings(page);
}

describe.runIf(runs)('the console’s delegations and workflows, in headless Chromium with a scripted model', () => {
  let browser: HeadlessChromium;
  let ctx: AppContext;
  let llm: ScriptedLlmServer;
  let server: ListeningServer;
  // Each test scripts the replies of the agents it runs.
  const scripts = new Map<string, Step[]>();
  const answer = (request: ScriptedRequest): ScriptedReply => {
    const id = [...scripts.keys()].find((agentId) => systemOf(request).includes(MARK(agentId)));
    const next = id === undefined ? undefined : scripts.get(id)!.shift();
    if (!next) return reply.error(500, { message: `no scripted reply for ${id ?? 'an agent without a mark'}` });
    return typeof next === 'function' ? next(request) : next;
  };

  const agent = async (id: string, settings: Record<string, unknown> = {}) => {
    const res = await server.send('POST', '/v1/agents', { id, name: id, instructions: MARK(id), ...settings });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };

  beforeAll(async () => {
    browser = await launchChromium();
    llm = await startScriptedLlmServer(answer);
    ctx = await createTestContext({ LLM_BASE_URL: llm.url, LLM_API_KEY: 'test-key', LLM_MODEL: 'test-model' });
    const model = createLlmProvider({ baseURL: llm.url, apiKey: 'test-key', model: 'test-model', retry: { maxAttempts: 1 } });
    server = await listen(createApp({ ...ctx, llm: model }));
  });
  afterAll(async () => {
    await server?.close();
    await llm?.close();
    await ctx?.close();
    await browser?.close();
  });

  async function openAt(hash: string, heading: string): Promise<{ page: Page; errors: string[] }> {
    const opened = await openPage(browser);
    await opened.page.goto(`${server.base}/console#/${hash}`);
    await opened.page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    return opened;
  }

  it('saves a cast and its delegation limits from the agent editor, and marks the field the API refuses', async () => {
    await agent('editor-researcher');
    const { page, errors } = await openAt('agents', 'Agents');
    await page.getByRole('cell', { name: 'editor-researcher', exact: true }).first().waitFor();
    await page.getByRole('button', { name: 'New agent' }).click();
    await page.getByLabel('Id (optional; the agentId of its memories)').fill('editor-lead');
    await page.getByLabel('Name', { exact: true }).fill('Editor lead');
    const cast = page.getByRole('group', { name: 'Cast: the agents it may delegate to' });
    await cast.getByRole('button', { name: 'Add a role' }).click();
    const first = cast.getByRole('group', { name: 'Role 1' });
    await first.getByLabel('Agent id', { exact: true }).fill('editor-researcher');
    await first.getByLabel('Description').fill('finds facts');
    await cast.getByRole('button', { name: 'Add a role' }).click();
    const second = cast.getByRole('group', { name: 'Role 2' });
    await second.getByLabel('Agent id', { exact: true }).fill('editor-auditor');
    await second.getByLabel('Role (the agent id when empty)').fill('audit');
    await second.getByLabel('Description').fill('checks numbers');
    await second.getByLabel('Hidden (not listed to the model)').check();
    await cast.getByLabel(/^Delegation depth/).fill('3');
    await cast.getByLabel(/^Delegations at once/).fill('2');
    expect(await axeFindings(page)).toEqual([]);
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByRole('status').filter({ hasText: 'Created Editor lead (editor-lead)' }).waitFor();
    const created = await server.send('GET', '/v1/agents/editor-lead');
    expect(created.body).toMatchObject({
      cast: [
        { agentId: 'editor-researcher', description: 'finds facts' },
        { agentId: 'editor-auditor', role: 'audit', description: 'checks numbers', hidden: true },
      ],
      delegation: { maxDepth: 3, maxParallel: 2 },
    });
    // An empty role is left out (it defaults to the agent's id), not sent as "".
    expect(created.body.cast[0]).not.toHaveProperty('role');

    // Edited: the rows come back; one removed, one naming the agent itself, which the API refuses.
    await page.getByRole('button', { name: 'Edit Editor lead' }).click();
    expect(await cast.getByRole('group', { name: 'Role 2' }).getByLabel('Role (the agent id when empty)').inputValue()).toBe('audit');
    expect(await cast.getByLabel(/^Delegation depth/).inputValue()).toBe('3');
    await cast.getByRole('button', { name: 'Remove role 2' }).click();
    await cast.getByRole('button', { name: 'Add a role' }).click();
    const itself = cast.getByRole('group', { name: 'Role 2' });
    await itself.getByLabel('Agent id', { exact: true }).fill('editor-lead');
    await itself.getByLabel('Description').fill('asks itself');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByRole('alert').filter({ hasText: 'cast.1.agentId' }).waitFor();
    const refused = itself.getByLabel('Agent id', { exact: true });
    expect(await refused.getAttribute('aria-invalid')).toBe('true');
    const issue = page.locator(`#${(await refused.getAttribute('aria-describedby'))!.replace(/:/g, '\\:')}`);
    expect(await issue.textContent()).toMatch(/^cast\.1\.agentId: /);
    // The other fields are not marked.
    expect(await cast.getByRole('group', { name: 'Role 1' }).getByLabel('Agent id', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    expect(await axeFindings(page)).toEqual([]);
    await shoot(page, 'delegation-cast-refused');
    // Nothing half-written: the stored cast is still the first version's.
    expect((await server.send('GET', '/v1/agents/editor-lead')).body).toMatchObject({ version: 1 });

    await cast.getByRole('button', { name: 'Remove role 2' }).click();
    await cast.getByLabel(/^Delegation depth/).fill('');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved Editor lead: version 2' }).waitFor();
    const saved = await server.send('GET', '/v1/agents/editor-lead');
    expect(saved.body.cast).toEqual([{ agentId: 'editor-researcher', description: 'finds facts' }]);
    expect(saved.body.delegation).toEqual({ maxParallel: 2 });
    expect(errors.filter((e) => !e.includes('status of 400'))).toEqual([]);
    await page.close();
  });

  it('shows a turn’s delegations in its activity, and the run tree under it with each run’s status and tokens', async () => {
    await agent('checker');
    await agent('researcher', { cast: [{ agentId: 'checker', description: 'confirms facts' }] });
    await agent('lead', { cast: [{ agentId: 'researcher', description: 'finds facts' }] });
    scripts.set('lead', [reply.toolCalls([delegateCall('d1', 'researcher', 'Find the capital of Peru')]), reply.text('Lima, says my researcher.')]);
    scripts.set('researcher', [reply.toolCalls([delegateCall('d2', 'checker', 'Confirm that it is Lima')]), reply.text('The capital of Peru is Lima.')]);
    scripts.set('checker', [reply.text('Confirmed.')]);

    const { page, errors } = await openAt('chat', 'Chat');
    await page.getByLabel('Agent', { exact: true }).fill('lead');
    await page.getByLabel('Agent', { exact: true }).press('Tab');
    await page.getByLabel('Message', { exact: true }).fill('What is the capital of Peru?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('status').filter({ hasText: 'The answer is complete' }).waitFor();
    const turn = page.locator('article.turn').last();
    expect(await turn.locator('.answer').textContent()).toBe('Lima, says my researcher.');
    const activity = turn.getByRole('list', { name: 'Tool calls, steering and compaction' });
    expect(
      await activity
        .getByRole('listitem')
        .filter({ hasText: /^Delegated to/ })
        .allTextContents(),
    ).toEqual(['Delegated to researcher (agent researcher): completed']);

    await turn.getByText('Run tree', { exact: true }).click();
    const tree = turn.getByRole('list', { name: 'Runs of this turn' });
    const researcher = tree.getByRole('list', { name: 'Runs under lead' }).getByRole('listitem').first();
    await researcher.filter({ hasText: 'checker' }).waitFor();
    // Five model calls of 15 tokens: the lead's two, the researcher's two and the checker's one, each run's rolled up.
    expect(await tree.locator('.run-line').first().textContent()).toMatch(/^lead: completed, 75 tokens/);
    expect(await researcher.locator('.run-line').first().textContent()).toMatch(/^researcher \(agent researcher\): completed, 45 tokens/);
    const checker = researcher.getByRole('list', { name: 'Runs under researcher' }).getByRole('listitem');
    expect(await checker.count()).toBe(1);
    expect(await checker.locator('.run-line').textContent()).toMatch(/^checker \(agent checker\): completed, 15 tokens/);
    expect(await axeFindings(page)).toEqual([]);
    await shoot(page, 'delegation-run-tree');

    await page.setViewportSize(PHONE);
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect(await axeFindings(page)).toEqual([]);
    await shoot(page, 'delegation-run-tree-phone');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('runs a workflow from its page: the path, each step’s output, the status and stop reason, and its runs', async () => {
    for (const id of ['classifier', 'billing-desk', 'tech-desk']) await agent(id);
    const triage = {
      id: 'triage',
      name: 'Support triage',
      entry: 'classify',
      nodes: [
        { id: 'classify', agentId: 'classifier', prompt: 'Classify: {{input}}' },
        { id: 'billing', agentId: 'billing-desk', prompt: 'Billing case for {{state.customer}}: {{nodes.classify.output}}' },
        { id: 'tech', agentId: 'tech-desk', prompt: 'Tech case: {{input}}' },
      ],
      edges: [
        { from: 'classify', to: 'billing', when: { outputEquals: 'billing' } },
        { from: 'classify', to: 'tech', when: { outputMatches: '^tech' } },
      ],
    };
    expect((await server.send('POST', '/v1/workflows', triage)).status).toBe(201);
    const loop = { id: 'loop', name: 'Endless loop', entry: 'again', maxSteps: 2, nodes: [{ id: 'again', agentId: 'tech-desk', prompt: 'Once more' }] };
    expect((await server.send('POST', '/v1/workflows', { ...loop, edges: [{ from: 'again', to: 'again' }] })).status).toBe(201);
    scripts.set('classifier', [reply.text('billing')]);
    scripts.set('billing-desk', [
      (request) => reply.text(JSON.stringify(request.body.messages).includes('Billing case for Ada: billing') ? 'Refund issued to Ada.' : 'Unfilled template'),
    ]);
    scripts.set('tech-desk', [reply.text('Tried once.'), reply.text('Tried twice.')]);

    const { page, errors } = await openAt('workflows', 'Workflows');
    await page.getByRole('button', { name: 'Open Support triage' }).click();
    const panel = page.getByRole('region', { name: 'Support triage' });
    expect(await panel.getByRole('list', { name: 'Nodes' }).getByRole('listitem').count()).toBe(3);
    expect(await panel.getByRole('list', { name: 'Edges' }).getByRole('listitem').allTextContents()).toEqual([
      'classify → billing when the output is “billing”',
      'classify → tech when the output matches /^tech/',
    ]);
    await panel.getByLabel('Input').fill('{"customer":"Ada","issue":"charged twice"}');
    await panel.getByRole('button', { name: 'Run workflow' }).click();
    await page.getByRole('status').filter({ hasText: 'Support triage ran 2 steps: completed' }).waitFor();
    const result = panel.getByRole('region', { name: 'Result' });
    expect(await result.getByRole('list', { name: 'Path' }).getByRole('listitem').allTextContents()).toEqual(['classify', 'billing']);
    const steps = result.getByRole('list', { name: 'Steps' }).getByRole('listitem');
    expect(await steps.locator('code').allTextContents()).toEqual(['classify', 'billing']);
    expect(await steps.locator('pre').allTextContents()).toEqual(['billing', 'Refund issued to Ada.']);
    const facts = await result.locator('dl.facts').textContent();
    expect(facts).toContain('StatuscompletedStop reasoncompletedOutputRefund issued to Ada.');

    await result.getByText('Run tree', { exact: true }).click();
    const stepRuns = result.getByRole('list', { name: 'Runs of this workflow run' }).getByRole('list', { name: /^Runs under / });
    await expect
      .poll(() => stepRuns.locator('.run-line').allTextContents())
      .toEqual([expect.stringMatching(/^classify \(agent classifier\): completed/), expect.stringMatching(/^billing \(agent billing-desk\): completed/)]);
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      expect(await freshAxeFindings(page), `at ${viewport.width} px`).toEqual([]);
      expect(await sidewaysOverflow(page), `at ${viewport.width} px`).toEqual([]);
      await shoot(page, `workflow-run-${viewport.width}`);
    }

    // A cycle past maxSteps: failed, and says why.
    await page.getByRole('button', { name: 'Open Endless loop' }).click();
    const looping = page.getByRole('region', { name: 'Endless loop' });
    await looping.getByLabel('Input').fill('go');
    await looping.getByRole('button', { name: 'Run workflow' }).click();
    await page.getByRole('status').filter({ hasText: 'Endless loop ran 2 steps: failed' }).waitFor();
    const ended = looping.getByRole('region', { name: 'Result' });
    expect(await ended.locator('dl.facts').textContent()).toContain('StatusfailedStop reasonmax_steps');
    expect(await ended.getByRole('list', { name: 'Path' }).getByRole('listitem').allTextContents()).toEqual(['again', 'again']);
    expect(await freshAxeFindings(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refuses a workflow input that starts as a JSON object but is not one, before anything runs', async () => {
    const { page, errors } = await openAt('workflows', 'Workflows');
    await page.getByRole('button', { name: 'Open Support triage' }).click();
    const requests = llm.requests.length;
    await page.getByLabel('Input').fill('{"customer": Ada}');
    await page.getByRole('button', { name: 'Run workflow' }).click();
    await page.getByRole('alert').filter({ hasText: 'is not a JSON object' }).waitFor();
    expect(llm.requests.length).toBe(requests);
    expect(errors).toEqual([]);
    await page.close();
  });
});
