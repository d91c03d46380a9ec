import { describe, expect, it } from 'vitest';
import { compactionLimit, compactionSettingsFor } from '../../src/compaction/compaction-config.js';
import { toolPairingProblems } from '../compaction/tool-pairing.js';
import { call } from '../http/http-test-context.js';
import type { ScriptedRequest } from '../../testkit/scripted-llm-server.js';
import { fromWire, kindOf, requestTokens } from '../../testkit/scripted-conversation-llm.js';
import type { DatabaseDriver } from '../support/database-drivers.js';
import { scriptedConversationFixture } from './scripted-conversation-fixture.js';

const MODEL = 'scripted-4k';
/** Ollama's default context: the window the held-out test used. */
const SMALL_WINDOW_ENV = {
  CONTEXT_WINDOW_TOKENS: '128000',
  COMPACTION_MODELS: JSON.stringify({ [MODEL]: { contextWindow: 4_096, outputReserve: 1_024 } }),
};
const TURNS = 80;
const SECRET = 'The launch code for project Heron is 7731.';
const question = (n: number) => (n === 5 ? `Turn 5: please keep this in mind. ${SECRET}` : `Turn ${n}: what do my notes say about subject ${n % 17}?`);

/** Every third turn searches the memories; a question naming turns reopens them. */
function toolFor(text: string) {
  const reopen = /^Reopen turn (\d+)/.exec(text);
  if (reopen) return { name: 'recall_turns', arguments: { fromTurn: Number(reopen[1]) } };
  const find = /^Find the turns about (.+)$/.exec(text);
  if (find) return { name: 'recall_turns', arguments: { query: find[1] } };
  const n = Number(/^Turn (\d+):/.exec(text)?.[1] ?? 0);
  return n % 3 === 0 ? { name: 'search_memories', arguments: { query: text.slice(0, 60), topK: 3 } } : undefined;
}

interface TurnRequests {
  chats: ScriptedRequest[];
  /** Summarising requests made while the turn's chat requests were being made: what the turn waited on. */
  critical: number;
}

/**
 * Issue 19's held-out test as a suite: an 80-turn conversation at a 4k window whose every third
 * turn calls a tool, through POST /v1/chat, with no pause between turns (the next question
 * does not wait for the background work).
 */
export function smallWindowConversationSuite(driver: DatabaseDriver) {
  describe('conversations at a 4k window', () => {
    const fixture = scriptedConversationFixture(driver, SMALL_WINDOW_ENV, MODEL);
    const harness = () => fixture.harness({ toolFor });

    /** One conversation of TURNS turns with its own user (episodic recall reads the same user's other conversations only). */
    async function converse(userId: string) {
      const h = await harness();
      const perTurn: TurnRequests[] = [];
      let conversationId: string | undefined;
      for (let n = 1; n <= TURNS; n++) {
        const first = h.llm.requests.length;
        const res = await call(h.app, 'POST', '/v1/chat', { message: question(n), userId, ...(conversationId ? { conversationId } : {}) });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        conversationId = res.body.conversationId as string;
        const requests = h.llm.requests.slice(first);
        const chatAt = requests.flatMap((r, i) => (kindOf(r) === 'chat' ? [i] : []));
        const during = requests.slice(chatAt[0], chatAt.at(-1)! + 1);
        perTurn.push({ chats: during.filter((r) => kindOf(r) === 'chat'), critical: during.filter((r) => kindOf(r) !== 'chat').length });
      }
      await fixture.ctx.backgroundTasks.whenIdle();
      return { ...h, conversationId: conversationId!, perTurn };
    }

    let first: Awaited<ReturnType<typeof converse>>;

    it('sends the turn before the question in every request, tool pairs whole, within the window, and waits on the summariser at most once in four turns', async () => {
      first = await converse('user-a');
      const limit = compactionLimit(compactionSettingsFor(fixture.ctx.config, MODEL));
      for (const [i, turn] of first.perTurn.entries()) {
        const n = i + 1;
        for (const request of turn.chats) {
          expect(requestTokens(request), `turn ${n}`).toBeLessThanOrEqual(limit);
          const messages = fromWire(request.body.messages);
          expect(toolPairingProblems(messages), `turn ${n}`).toEqual([]);
          // Raw, or as its checkpoint, which keeps the question.
          if (n > 1) expect(JSON.stringify(request.body.messages), `turn ${n} lacks turn ${n - 1}`).toContain(JSON.stringify(question(n - 1)).slice(1, -1));
        }
      }
      const critical = first.perTurn.reduce((sum, t) => sum + t.critical, 0);
      expect(critical / TURNS).toBeLessThanOrEqual(0.25);
      // Summaries were written, in the background.
      expect(first.llm.requests.filter((r) => kindOf(r) === 'summary').length).toBeGreaterThan(0);
      const stored = await call(first.app, 'GET', `/v1/conversations/${first.conversationId}`);
      expect(stored.status, JSON.stringify(stored.body)).toBe(200);
      const layers = stored.body.summary.layers as Array<{ fromTurn: number; throughTurn: number }>;
      expect(layers[0]!.fromTurn).toBe(1);
      // The estimate is of a whole request, measured on the last turn, beside the limit.
      expect(stored.body.tokens).toMatchObject({ fixedMeasured: true, limit });
      expect(stored.body.tokens.nextRequest).toBe(stored.body.tokens.fixed + stored.body.tokens.compacted);
      expect(stored.body.tokens.nextRequest).toBeLessThanOrEqual(limit);
    });

    it('compacts the same conversation identically a second time', async () => {
      const second = await converse('user-b');
      const prompts = (run: typeof first) => run.perTurn.map((t) => t.chats.map((r) => r.body.messages));
      expect(prompts(second)).toEqual(prompts(first));
    });

    it('reopens turn 5 word for word at turn 81 with recall_turns, and nothing of another conversation, agent or tenant', async () => {
      const other = [
        { role: 'user' as const, content: 'The zebra protocol needs the orange key.' },
        { role: 'assistant' as const, content: 'Noted: the zebra protocol needs the orange key.', toolCalls: [] },
      ].map((message) => ({ message }));
      await fixture.ctx.conversations.forTenant('default').appendTurn({ id: crypto.randomUUID(), agentId: 'default', userId: 'user-a', messages: other });
      await fixture.ctx.conversations.forTenant('default').appendTurn({ id: crypto.randomUUID(), agentId: 'another-agent', userId: 'user-a', messages: other });
      await fixture.ctx.conversations.forTenant('other-tenant').appendTurn({ id: crypto.randomUUID(), agentId: 'default', userId: 'user-a', messages: other });

      const h = await harness();
      const ask = async (message: string) => {
        const before = h.llm.requests.length;
        const res = await call(h.app, 'POST', '/v1/chat', { message, userId: 'user-a', conversationId: first.conversationId });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.toolCalls.map((c: { name: string }) => c.name)).toEqual(['recall_turns']);
        // The tool's result as the model read it.
        const answered = h.llm.requests
          .slice(before)
          .filter((r) => kindOf(r) === 'chat')
          .at(-1)!;
        return String(answered.body.messages.at(-1)!.content);
      };

      const reopened = await ask('Reopen turn 5');
      expect(reopened).toContain('Turn 5:');
      expect(reopened).toContain(SECRET);
      expect(reopened).not.toContain('Turn 6:');

      const found = await ask('Find the turns about the launch code for Heron');
      expect(found).toContain(SECRET);

      const elsewhere = await ask('Find the turns about the zebra protocol orange key');
      expect(elsewhere).not.toContain('needs the orange key');
      expect(elsewhere).toContain('No earlier turn of this conversation matches');
    });
  });
}
