import { describe, expect, it } from 'vitest';
import { UrgentFirstQueue } from '../../src/workers/urgent-first-queue.js';

// Piscina's queued tasks carry the envelope the pool ran as `task`.
const task = (name: string, urgent = false) => ({ name, task: { urgent } }) as unknown as Parameters<UrgentFirstQueue['push']>[0];
const names = (queue: UrgentFirstQueue) => {
  const out: string[] = [];
  for (let t = queue.shift(); t; t = queue.shift()) out.push((t as unknown as { name: string }).name);
  return out;
};

describe('UrgentFirstQueue', () => {
  it('lets urgent tasks leave first, each line in arrival order', () => {
    const queue = new UrgentFirstQueue();
    for (const t of [task('save 1'), task('save 2'), task('query 1', true), task('save 3'), task('query 2', true)]) queue.push(t);
    expect(queue.size).toBe(5);
    expect(names(queue)).toEqual(['query 1', 'query 2', 'save 1', 'save 2', 'save 3']);
    expect(queue.shift()).toBeNull();
  });

  it('puts a task back at the head of its own line, and removes one from either', () => {
    const queue = new UrgentFirstQueue();
    const removed = task('save 2');
    for (const t of [task('save 1'), removed, task('query 1', true)]) queue.push(t);
    queue.unshift(task('save 0'));
    queue.unshift(task('query 0', true));
    queue.remove(removed);
    expect(names(queue)).toEqual(['query 0', 'query 1', 'save 0', 'save 1']);
  });
});
