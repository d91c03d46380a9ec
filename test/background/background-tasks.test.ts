import { describe, expect, it } from 'vitest';
import { createBackgroundTasks } from '../../src/background/background-tasks.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('background tasks', () => {
  it('runs one task per key, reports errors and can be awaited', async () => {
    const errors: string[] = [];
    const tasks = createBackgroundTasks((key) => errors.push(key));
    let runs = 0;
    expect(
      tasks.run('a', async () => {
        await sleep(20);
        runs += 1;
      }),
    ).toBe(true);
    expect(
      tasks.run('a', async () => {
        runs += 1;
      }),
    ).toBe(false);
    expect(tasks.has('a')).toBe(true);
    tasks.run('b', async () => {
      throw new Error('boom');
    });
    await tasks.whenIdle();
    expect(runs).toBe(1);
    expect(errors).toEqual(['b']);
    expect(tasks.has('a')).toBe(false);
  });

  it('aborts running tasks at close and refuses new ones', async () => {
    const tasks = createBackgroundTasks();
    let aborted = false;
    tasks.run(
      'slow',
      (signal) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          }),
        ),
    );
    await tasks.close();
    expect(aborted).toBe(true);
    expect(tasks.run('late', async () => {})).toBe(false);
  });
});
