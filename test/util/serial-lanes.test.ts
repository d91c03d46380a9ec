import { describe, expect, it } from 'vitest';
import { SerialLanes } from '../../src/util/serial-lanes.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('SerialLanes', () => {
  it('runs the tasks of one key one at a time in arrival order, and other keys meanwhile', async () => {
    const lanes = new SerialLanes();
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([lanes.run('a', task('a1')), lanes.run('a', task('a2')), lanes.run('b', task('b1'))]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    expect(log.indexOf('end a1')).toBeLessThan(log.indexOf('start a2'));
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
    expect(lanes.size).toBe(0);
  });

  it("gives a task's failure to its caller only: the next task of the key runs", async () => {
    const lanes = new SerialLanes();
    const failed = lanes.run('a', async () => {
      throw new Error('boom');
    });
    const next = lanes.run('a', async () => 'ran');
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ran');
  });
});
