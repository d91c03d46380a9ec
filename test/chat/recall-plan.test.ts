import { describe, expect, it } from 'vitest';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/compaction/compaction-config.js';
import { planRecall } from '../../src/chat/recall-plan.js';
import { CHAT_TOP_K_DEFAULT, sourcesFor } from '../../src/chat/window-fit.js';

const SMALL_WINDOW = { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 4_096 };

describe('planRecall', () => {
  it("keeps a topK the request names, even at a small window, over the agent's", () => {
    const { limits } = planRecall({ topK: 9 }, { memoryTopK: 1, knowledgeTopK: 2 }, SMALL_WINDOW);
    expect(limits).toMatchObject({ memoryTopK: 9, knowledgeTopK: 9 });
  });

  it("shrinks the agent's and the chat's defaults to what a small window affords when a model answers", () => {
    const affordable = sourcesFor(SMALL_WINDOW, 10);
    expect(affordable).toBeLessThan(10);
    expect(planRecall({}, { memoryTopK: 10 }, SMALL_WINDOW).limits).toMatchObject({
      memoryTopK: affordable,
      knowledgeTopK: sourcesFor(SMALL_WINDOW, CHAT_TOP_K_DEFAULT),
    });
  });

  it('shrinks nothing without a model (no window)', () => {
    expect(planRecall({}, { memoryTopK: 10 }, undefined).limits).toMatchObject({ memoryTopK: 10, knowledgeTopK: CHAT_TOP_K_DEFAULT });
  });

  it("takes each tag filter and candidateK from the request, else from the agent's recall settings", () => {
    const plan = planRecall({ tagsAny: ['a'], candidateK: 7 }, { tagsAny: ['x'], tagsNone: ['y'], candidateK: 40, reranker: 'none' }, undefined);
    expect(plan.filters).toEqual({ tagsAny: ['a'], tagsAll: undefined, tagsNone: ['y'] });
    expect(plan.limits).toMatchObject({ candidateK: 7, reranker: 'none' });
  });

  it("names turnTopK only when the agent sets it, so that recall's own default applies otherwise", () => {
    expect('turnTopK' in planRecall({}, undefined, undefined).limits).toBe(false);
    expect(planRecall({}, { turnTopK: 0 }, undefined).limits.turnTopK).toBe(0);
  });
});
