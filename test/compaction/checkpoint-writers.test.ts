import { afterEach, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { writeTurnCheckpoint, parseCheckpointReply } from '../../src/compaction/llm-checkpoint-writer.js';
import { buildRuleBasedCheckpoint } from '../../src/compaction/rule-based-checkpoint.js';
import { SummarizerTimeoutError, createLlmSummarizer } from '../../src/compaction/summarizer.js';
import { CHECKPOINT_QUESTION_MAX_CHARS, type CompletedTurn } from '../../src/compaction/turn-checkpoint.js';
import { type Script, type ScriptedLlmServer, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { createFakeSummarizer } from './fake-summarizer.js';
import { FACT, turnMessages } from './history-fixtures.js';

const turn3: CompletedTurn = { turn: 3, firstSeq: 9, lastSeq: 12, messages: turnMessages(3) };

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function llmSummarizer(script: Script, timeoutMs = 5_000) {
  server = await startScriptedLlmServer(script);
  const provider = createLlmProvider({ baseURL: server.url, apiKey: 'k', model: 'summarizer', retry: { maxAttempts: 1 } });
  return createLlmSummarizer(provider, { timeoutMs });
}

describe('rule-based checkpoint', () => {
  it('records the range, the question, the answer and every tool call with its outcome', () => {
    const turn: CompletedTurn = {
      turn: 4,
      firstSeq: 13,
      lastSeq: 18,
      messages: [
        { role: 'user', content: 'q'.repeat(3_000) },
        {
          role: 'assistant',
          content: null,
          toolCalls: [
            { id: 'a', name: 'search_memories', arguments: '{"query":"tea"}' },
            { id: 'b', name: 'delete_memory', arguments: '{"key":"x"}' },
          ],
        },
        { role: 'tool', toolCallId: 'a', content: 'Alice likes tea' },
        { role: 'tool', toolCallId: 'b', content: 'Error: no memory with this key', isError: true },
        { role: 'assistant', content: 'Alice likes tea [1].', toolCalls: [] },
      ],
    };
    const checkpoint = buildRuleBasedCheckpoint(turn);
    expect(checkpoint).toMatchObject({ turn: 4, firstSeq: 13, lastSeq: 18, source: 'rules' });
    expect(checkpoint.question.length).toBeLessThanOrEqual(CHECKPOINT_QUESTION_MAX_CHARS);
    expect(checkpoint.summary).toContain('The assistant answered: Alice likes tea [1].');
    expect(checkpoint.actionableSummary).toContain('search_memories({"query":"tea"}) → ok: Alice likes tea');
    expect(checkpoint.actionableSummary).toContain('delete_memory({"key":"x"}) → error: Error: no memory with this key');
    expect(checkpoint.actionableSummary).toContain('Errors: 1 of 2 calls failed.');
  });
});

describe('LLM checkpoint writer', () => {
  it('takes the model’s JSON, even fenced', async () => {
    expect(parseCheckpointReply('```json\n{"summary":"S","actionable_summary":"A"}\n```')).toEqual({ summary: 'S', actionableSummary: 'A' });
    const summarizer = await llmSummarizer([
      reply.text('{"summary":"The user asked to remember the locker code 4512.","actionable_summary":"Searched memories."}'),
    ]);
    const checkpoint = await writeTurnCheckpoint(turn3, { summarizer, maxRequestTokens: 2_000 });
    expect(checkpoint).toMatchObject({
      turn: 3,
      firstSeq: 9,
      lastSeq: 12,
      question: `Please ${FACT}.`,
      summary: 'The user asked to remember the locker code 4512.',
      actionableSummary: 'Searched memories.',
      source: 'llm',
    });
    const sent = server!.requests[0]!.body;
    expect(sent.tools).toBeUndefined();
    expect(String(sent.messages[1]!.content)).toContain(`User: Please ${FACT}.`);
  });

  it('falls back to the rules when the model fails, answers nonsense or times out', async () => {
    const reasons: unknown[] = [];
    const onFallback = (e: unknown) => reasons.push(e);
    const failing = await writeTurnCheckpoint(turn3, { summarizer: createFakeSummarizer({ fail: true }), maxRequestTokens: 2_000, onFallback });
    expect(failing).toEqual(buildRuleBasedCheckpoint(turn3));

    const nonsense = await llmSummarizer([reply.text('I would rather not.')]);
    expect(await writeTurnCheckpoint(turn3, { summarizer: nonsense, maxRequestTokens: 2_000, onFallback })).toMatchObject({ source: 'rules' });
    await server!.close();

    const slow = await llmSummarizer([reply.text('{"summary":"late"}', { delayMs: 2_000 })], 100);
    const started = Date.now();
    expect(await writeTurnCheckpoint(turn3, { summarizer: slow, maxRequestTokens: 2_000, onFallback })).toMatchObject({ source: 'rules' });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(reasons).toHaveLength(3);
    expect(reasons[2]).toBeInstanceOf(SummarizerTimeoutError);
  });

  it('fits a turn with huge tool output into the request budget', async () => {
    const summarizer = createFakeSummarizer();
    const big: CompletedTurn = { turn: 1, firstSeq: 1, lastSeq: 4, messages: turnMessages(1, 40_000) };
    await writeTurnCheckpoint(big, { summarizer, maxRequestTokens: 500 });
    const { estimateMessagesTokens } = await import('../../src/compaction/token-estimate.js');
    const request = summarizer.requests[0]!;
    expect(
      estimateMessagesTokens([
        { role: 'system', content: request.instructions },
        { role: 'user', content: request.input },
      ]),
    ).toBeLessThanOrEqual(500);
  });
});

describe('short turns', () => {
  it('are checkpointed by the rules without asking the model', async () => {
    const summarizer = createFakeSummarizer();
    const short: CompletedTurn = {
      turn: 2,
      firstSeq: 5,
      lastSeq: 6,
      messages: [
        { role: 'user', content: 'Please remember that my locker code is 4512.' },
        { role: 'assistant', content: 'Noted.', toolCalls: [] },
      ],
    };
    const checkpoint = await writeTurnCheckpoint(short, { summarizer, maxRequestTokens: 2_000 });
    expect(summarizer.requests).toHaveLength(0);
    expect(checkpoint).toMatchObject({ source: 'rules', question: 'Please remember that my locker code is 4512.' });
    expect(checkpoint.summary).toContain('locker code is 4512');
  });
});
