import { describe, expect, it } from 'vitest';
import { compactionLimit, compactionSettingsFor } from '../../src/compaction/compaction-config.js';
import { toolPairingProblems } from '../compaction/tool-pairing.js';
import { call, clearConversations } from '../http/http-test-context.js';
import { fromWire, kindOf, requestTokens } from '../../testkit/scripted-conversation-llm.js';
import type { DatabaseDriver } from '../support/database-drivers.js';
import { type ConversationHarness, scriptedConversationFixture } from './scripted-conversation-fixture.js';

const MODEL = 'scripted-small';
/** A small window for this model only: the deployment default stays large, so the per-model setting is what applies. */
const LONG_CONVERSATION_ENV = {
  CONTEXT_WINDOW_TOKENS: '128000',
  COMPACTION_MODELS: JSON.stringify({ [MODEL]: { contextWindow: 6_000, outputReserve: 500, recentMessages: 8 } }),
};
const FACT_TURN = 3;
const FACT = 'Please remember that my locker code is 4512.';

const question = (turn: number) => (turn === FACT_TURN ? FACT : `Turn ${turn}: what do my notes say about subject ${turn % 17}?`);

/**
 * The long-conversation test, run on each driver (describeOnDrivers): 200 turns with tool
 * calls through POST /v1/chat against a 6k-token window, with the scripted LLM writing checkpoints
 * and summaries. The app context has LONG_CONVERSATION_ENV and a database of its own.
 */
export function longConversationSuite(driver: DatabaseDriver) {
  describe('long conversations', () => {
    const fixture = scriptedConversationFixture(driver, LONG_CONVERSATION_ENV, MODEL);
    const harness = fixture.harness;

    async function turn(h: ConversationHarness, conversationId: string | undefined, n: number, topK = 2) {
      const res = await call(h.app, 'POST', '/v1/chat', { message: question(n), topK, ...(conversationId ? { conversationId } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { conversationId: string; answer: string };
    }

    it('keeps 200 turns within the window, tool calls with their results, and turn 3 in view through a summary', async () => {
      const h = await harness();
      const limit = compactionLimit(compactionSettingsFor(fixture.ctx.config, MODEL));
      let conversationId: string | undefined;
      for (let n = 1; n <= 200; n++) {
        conversationId = (await turn(h, conversationId, n)).conversationId;
        // Checkpoints are written after the reply; a user's next message comes later than that.
        await fixture.ctx.backgroundTasks.whenIdle();
      }

      const requests = h.llm.requests;
      expect(requests.filter((r) => kindOf(r) === 'chat')).toHaveLength(400);
      for (const [i, request] of requests.entries()) {
        expect(requestTokens(request), `request ${i} (${kindOf(request)})`).toBeLessThanOrEqual(limit);
        expect(toolPairingProblems(fromWire(request.body.messages)), `request ${i}`).toEqual([]);
      }
      // Without compaction the last request would hold the whole history.
      const last = requests.filter((r) => kindOf(r) === 'chat').at(-1)!;
      const seen = JSON.stringify(last.body.messages);
      expect(seen).toContain('locker code is 4512');
      expect(seen).not.toContain(FACT);
      expect(seen).toContain('Summary of turns 1-');
      expect(seen).toContain(question(200));

      // Every turn was checkpointed exactly once (by the rules when short: turn 3's search found
      // nothing); summaries were extended, never redone.
      const stored = await call(h.app, 'GET', `/v1/conversations/${conversationId}`);
      expect(stored.body.checkpoints.map((c: { turn: number }) => c.turn)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      const byLlm = stored.body.checkpoints.filter((c: { source: string }) => c.source === 'llm').length;
      expect(byLlm).toBeGreaterThanOrEqual(190);
      const checkpointInputs = requests.filter((r) => kindOf(r) === 'checkpoint').map((r) => /User: ([^\n]*)/.exec(String(r.body.messages[1]!.content))?.[1]);
      expect(checkpointInputs).toHaveLength(byLlm);
      expect(new Set(checkpointInputs).size).toBe(byLlm);
      const summaryTurns = requests
        .filter((r) => kindOf(r) === 'summary')
        .flatMap((r) => [...String(r.body.messages[1]!.content).matchAll(/^Turn (\d+):/gm)].map((m) => Number(m[1])));
      expect(summaryTurns.length).toBeGreaterThan(0);
      expect(new Set(summaryTurns).size).toBe(summaryTurns.length);

      expect(stored.body.conversation).toMatchObject({ turnCount: 200, messageCount: 800 });
      expect(stored.body.summary.layers.length).toBeLessThanOrEqual(3);
      expect(stored.body.tokens.history).toBeGreaterThan(10 * limit);
      expect(stored.body.tokens.compacted).toBeLessThanOrEqual(limit);
    });

    it('goes on with rule-based checkpoints and summaries when the summarizer fails', async () => {
      const h = await harness({ failSummaries: true });
      const limit = compactionLimit(compactionSettingsFor(fixture.ctx.config, MODEL));
      let conversationId: string | undefined;
      for (let n = 1; n <= 60; n++) {
        conversationId = (await turn(h, conversationId, n)).conversationId;
        await fixture.ctx.backgroundTasks.whenIdle();
      }
      const failed = h.llm.requests.filter((r) => kindOf(r) !== 'chat');
      expect(failed.length).toBeGreaterThan(60);
      for (const request of h.llm.requests) expect(requestTokens(request)).toBeLessThanOrEqual(limit);
      const stored = await call(h.app, 'GET', `/v1/conversations/${conversationId}`);
      expect(stored.body.conversation.turnCount).toBe(60);
      expect(stored.body.checkpoints).toHaveLength(60);
      expect(stored.body.checkpoints.every((c: { source: string }) => c.source === 'rules')).toBe(true);
      expect(stored.body.summary.layers.every((l: { source: string }) => l.source === 'rules')).toBe(true);
    });

    it('streams a compaction event and does not wait for the checkpoint before replying', async () => {
      // Alone: turns of the conversations above, recalled as sources, would grow the prompt past
      // what compaction fits without a (slow, here) summary.
      await clearConversations(fixture.ctx);
      // The summariser is slow for turn 13 only: twelve slow checkpoints before it would only be waited out.
      let summaryDelayMs = 0;
      const h = await harness({ summaryDelayMs: () => summaryDelayMs });
      let conversationId: string | undefined;
      for (let n = 1; n <= 12; n++) conversationId = (await turn(h, conversationId, n)).conversationId;
      await fixture.ctx.backgroundTasks.whenIdle();
      summaryDelayMs = 1_500;

      const started = Date.now();
      const res = await h.app.request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: question(13), topK: 2, conversationId, stream: true }),
      });
      const events = (await res.text())
        .split('\n\n')
        .filter(Boolean)
        .map((block) => ({
          event: /^event: (.*)$/m.exec(block)?.[1],
          data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>,
        }));
      expect(Date.now() - started).toBeLessThan(1_500);
      const compaction = events.find((e) => e.event === 'compaction');
      expect(compaction?.data).toMatchObject({ strategy: expect.any(String), strategies: expect.any(Array), limit: expect.any(Number) });
      expect(compaction!.data.tokensAfter as number).toBeLessThan(compaction!.data.tokensBefore as number);
      expect(events.at(-1)?.event).toBe('done');
      // The reply is out; turn 13's checkpoint is still being written.
      const before = await call(h.app, 'GET', `/v1/conversations/${conversationId}`);
      expect(before.body.checkpoints.map((c: { turn: number }) => c.turn)).not.toContain(13);
      await fixture.ctx.backgroundTasks.whenIdle();
      const after = await call(h.app, 'GET', `/v1/conversations/${conversationId}`);
      expect(after.body.checkpoints.map((c: { turn: number }) => c.turn)).toContain(13);
    });
  });
}
