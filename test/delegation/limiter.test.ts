import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/delegation/limiter.js';

describe('the delegation limiter', () => {
  it('runs at most `limit` tasks at once, handing each slot on', async () => {
    const limit = createLimiter(2);
    let running = 0;
    let most = 0;
    const task = () =>
      limit(async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
      });
    await Promise.all(Array.from({ length: 7 }, task));
    expect(most).toBe(2);
    expect(running).toBe(0);
  });
});
