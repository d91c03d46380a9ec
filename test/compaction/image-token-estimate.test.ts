import { describe, expect, it } from 'vitest';
import { compactPrompt } from '../../src/compaction/compactor.js';
import { IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS, estimateMessageTokens, estimateTextTokens } from '../../src/compaction/token-estimate.js';
import type { ChatMessage, ImagePart } from '../../src/llm/messages.js';
import { LIVE, SYSTEM, historyOf, ruleCheckpoints } from './history-fixtures.js';

const image = (n: number): ImagePart => ({ url: `data:image/png;base64,${'A'.repeat(40)}${n}`, attachmentId: `att-${n}`, mediaType: 'image/png' });

describe('images in the token estimate', () => {
  it('counts every image sent with a user message or a tool result, regardless of the data URL length', () => {
    const text = 'What is in these pictures?';
    const user: ChatMessage = { role: 'user', content: text, images: [image(1), image(2)] };
    expect(estimateMessageTokens(user)).toBe(MESSAGE_OVERHEAD_TOKENS + estimateTextTokens(text) + 2 * IMAGE_TOKENS);
    const tool: ChatMessage = { role: 'tool', toolCallId: 'c1', content: 'screenshot', images: [image(3)] };
    expect(estimateMessageTokens(tool)).toBe(MESSAGE_OVERHEAD_TOKENS + estimateTextTokens('screenshot') + IMAGE_TOKENS);
  });

  it('leaves out a stored image not loaded for the request, which is not sent', () => {
    const text = 'An older picture';
    const user: ChatMessage = { role: 'user', content: text, images: [{ attachmentId: 'att-9', mediaType: 'image/png' }] };
    expect(estimateMessageTokens(user)).toBe(MESSAGE_OVERHEAD_TOKENS + estimateTextTokens(text));
  });

  it('makes window-fit compact a history whose images alone overflow the window', async () => {
    const history = historyOf(4);
    const settings = { contextWindow: 6_000, outputReserve: 256, triggerShare: 0.85, recentMessages: 4 };
    const base = { system: [SYSTEM], live: LIVE, summary: undefined, settings };
    const plain = await compactPrompt({ ...base, history, checkpoints: ruleCheckpoints(history) });
    expect(plain.strategies).toEqual([]);

    const withImages = history.map((turn) => ({
      ...turn,
      messages: turn.messages.map((m, i) => (i === 0 && m.role === 'user' ? { ...m, images: [image(turn.turn)] } : m)),
    }));
    const result = await compactPrompt({ ...base, history: withImages, checkpoints: ruleCheckpoints(withImages) });
    expect(result.tokensBefore).toBe(plain.tokensBefore + 4 * IMAGE_TOKENS);
    expect(result.strategies).not.toEqual([]);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.limit);
  });
});
