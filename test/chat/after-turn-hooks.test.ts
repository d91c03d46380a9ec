import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { type ChatReply, type ChatService, createChatService } from '../../src/chat/chat-service.js';
import { type AfterTurn, type AfterTurnHook, createAfterTurnHooks } from '../../src/conversations/after-turn-hooks.js';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/compaction/compaction-config.js';
import { createCheckpointHook } from '../../src/conversations/checkpoint-hook.js';
import { loadConfig } from '../../src/config/config.js';
import { fixedAgentRuntime } from '../../testkit/agent-runtime.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type LogLine, createCapturedLogger } from '../support/captured-logger.js';

const TENANT = 'acme';

/**
 * The chat's after-turn hooks on a real store: a hook registered beside the checkpoint runs after
 * the reply, a failing one is logged and changes nothing else, and shutdown aborts and drains them.
 */
describe('chat after-turn hooks', () => {
  let ctx: AppContext;
  let lines: LogLine[];

  beforeAll(async () => {
    const captured = createCapturedLogger('warn');
    lines = captured.lines;
    ctx = await createAppContext(loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'warn' }), {
      embedder: createHashEmbedder(64),
      llm: null,
      logger: captured.logger,
    });
    await ctx.memories.forTenant(TENANT).save({ key: 'tea', content: 'Alice prefers green tea in the afternoon.', agentId: 'alice' });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  /** The chat of TENANT with the checkpoint hook and `extra` after it, as app-context registers hooks. */
  function chatWith(...extra: AfterTurnHook[]): ChatService {
    const checkpoint = createCheckpointHook({ compaction: { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 8_000 }, summaryTimeoutMs: 1_000 });
    return createChatService({
      tenantId: TENANT,
      memories: ctx.memories.forTenant(TENANT),
      agentRuntime: fixedAgentRuntime(),
      conversations: ctx.conversations.forTenant(TENANT),
      afterTurn: createAfterTurnHooks([checkpoint, ...extra], ctx.backgroundTasks),
      runs: ctx.runs.forTenant(TENANT),
    });
  }

  it('runs a second hook after the reply, with the stored turn', async () => {
    const seen: AfterTurn[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const chat = chatWith({
      name: 'second',
      async run(turn) {
        seen.push(turn);
        await gate;
        finished = true;
      },
    });

    const reply = (await chat.chat({ message: 'What tea does Alice like?', agentId: 'alice' })) as ChatReply;
    // The reply is out while the hook is still waiting.
    expect(reply.answer).toContain('green tea');
    expect(finished).toBe(false);
    release();
    await ctx.backgroundTasks.whenIdle();
    expect(finished).toBe(true);

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ tenantId: TENANT, conversationId: reply.conversationId, agentId: 'alice', userId: null, llm: undefined });
    expect(seen[0]!.turn).toMatchObject({ turn: 1, firstSeq: 1, lastSeq: 2 });
    expect(seen[0]!.turn.messages).toEqual([
      { role: 'user', content: 'What tea does Alice like?' },
      { role: 'assistant', content: reply.answer, toolCalls: [] },
    ]);
    // The checkpoint hook ran beside it.
    const view = await chat.describeConversation(reply.conversationId, 'alice');
    expect(view?.checkpoints.map((c) => c.turn)).toEqual([1]);
  });

  it('logs a failing hook; the reply, the checkpoint and the other hooks are unaffected', async () => {
    const plain = (await chatWith().chat({ message: 'What tea does Alice like?', agentId: 'alice' })) as ChatReply;
    lines.length = 0;
    const after: number[] = [];
    const chat = chatWith(
      {
        name: 'failing',
        run: async () => {
          throw new Error('index unavailable');
        },
      },
      { name: 'after', run: async ({ turn }) => void after.push(turn.turn) },
    );

    const reply = (await chat.chat({ message: 'What tea does Alice like?', agentId: 'alice' })) as ChatReply;
    await ctx.backgroundTasks.whenIdle();
    expect({ ...reply, conversationId: plain.conversationId, runId: plain.runId }).toEqual(plain);
    expect(after).toEqual([1]);
    const view = await chat.describeConversation(reply.conversationId, 'alice');
    expect(view?.checkpoints.map((c) => c.turn)).toEqual([1]);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'background task failed',
        task: `failing:${reply.conversationId}:1`,
        err: expect.objectContaining({ message: 'index unavailable' }),
      }),
    ]);

    // The next turn of the conversation goes on as usual.
    const next = (await chat.chat({ message: 'When does she drink it?', agentId: 'alice', conversationId: reply.conversationId })) as ChatReply;
    await ctx.backgroundTasks.whenIdle();
    expect(next.conversationId).toBe(reply.conversationId);
    expect(after).toEqual([1, 2]);
  });

  // Last: it closes the context.
  it('aborts the hooks still running at shutdown and waits for them before the database closes', async () => {
    const events: string[] = [];
    const chat = chatWith({
      name: 'slow',
      run: ({ signal }) =>
        new Promise<void>((_, reject) => {
          events.push('started');
          signal.addEventListener('abort', () =>
            setTimeout(() => {
              events.push('settled');
              reject(signal.reason as Error);
            }, 50),
          );
        }),
    });
    await chat.chat({ message: 'What tea does Alice like?', agentId: 'alice' });
    expect(events).toEqual(['started']);
    lines.length = 0;
    await ctx.close();
    events.push('closed');
    expect(events).toEqual(['started', 'settled', 'closed']);
    // Failing because of the shutdown is not worth a warning.
    expect(lines.filter((l) => l.msg === 'background task failed')).toEqual([]);
  });
});
