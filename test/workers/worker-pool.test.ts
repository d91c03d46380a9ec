import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkerPool, type WorkerPoolOptions } from '../../src/workers/worker-pool.js';
import type { ScriptedInit, ScriptedTask } from './support/scripted-pool-worker.js';

class ScriptedCrashError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ScriptedCrashError';
  }
}

type Pool = WorkerPool<ScriptedTask, string | string[], { identity: string }, ScriptedInit>;

describe('WorkerPool', () => {
  let dir: string;
  const pools: Pool[] = [];
  const start = async (options: Partial<WorkerPoolOptions<ScriptedInit>> = {}): Promise<Pool> => {
    const pool = await WorkerPool.start<ScriptedTask, string | string[], { identity: string }, ScriptedInit>({
      entryUrl: new URL('./support/scripted-pool-worker.ts', import.meta.url).href,
      init: { dir },
      workers: 1,
      tasksPerWorker: 2,
      maxFailedRestarts: 3,
      name: 'ScriptedPool',
      workerName: 'scripted worker',
      crashedError: ScriptedCrashError,
      ...options,
    });
    pools.push(pool);
    return pool;
  };
  const crash = async (pool: Pool) => {
    await expect(pool.run({ op: 'crash' })).rejects.toThrow(/scripted worker stopped \(.*scripted worker crash/);
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'memrag-worker-pool-'));
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it('starts every worker before resolving, with what they report', async () => {
    const pool = await start({ workers: 2 });
    expect(pool.size).toBe(2);
    expect(pool.info).toEqual({ identity: 'v1' });
    expect(await Promise.all([pool.run({ op: 'echo', value: 'a' }), pool.run({ op: 'echo', value: 'b' })])).toEqual(['a', 'b']);
  });

  it('fails to start with the setup error of a worker', async () => {
    await writeFile(path.join(dir, 'fail-next'), '1');
    await expect(start({ workers: 2 })).rejects.toThrow('scripted setup failure');
  });

  it('rejects a task that fails with its error, and keeps serving', async () => {
    const pool = await start();
    await expect(pool.run({ op: 'throw' })).rejects.toThrow('scripted task failure');
    expect(await pool.run({ op: 'echo', value: 'after' })).toBe('after');
  });

  it('runs waiting tasks first in, first out', async () => {
    const pool = await start({ tasksPerWorker: 1 });
    const values = ['1', '2', '3', '4', '5', '6'];
    await Promise.all([pool.run({ op: 'sleep', ms: 100, value: '0' }), ...values.map((value) => pool.run({ op: 'echo', value }))]);
    expect(await pool.run({ op: 'history' })).toEqual(['0', ...values]);
  });

  it('runs a call of several tasks over the workers, with the results in order', async () => {
    const pool = await start({ workers: 2 });
    const tasks: ScriptedTask[] = [
      { op: 'sleep', ms: 100, value: 'a' },
      { op: 'echo', value: 'b' },
      { op: 'sleep', ms: 50, value: 'c' },
      { op: 'echo', value: 'd' },
    ];
    expect(await pool.runAll(tasks)).toEqual(['a', 'b', 'c', 'd']);
    expect(await pool.runAll([])).toEqual([]);
  });

  it('fails a call at its first failing task, and its worker skips the tasks of that call it is handed afterwards', async () => {
    const pool = await start({ tasksPerWorker: 1 });
    const call = pool.runAll([
      { op: 'sleep', ms: 100, value: 'first' },
      { op: 'throw' },
      { op: 'echo', value: 'dropped' },
      { op: 'echo', value: 'dropped too' },
    ]);
    await expect(call).rejects.toThrow('scripted task failure');
    expect(await pool.run({ op: 'history' })).toEqual(['first']);
  });

  it('never runs a task aborted before its worker started it', async () => {
    const pool = await start();
    const running = pool.run({ op: 'sleep', ms: 200, value: 'running' });
    const controller = new AbortController();
    const held = pool.run({ op: 'echo', value: 'held' }, { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(held).rejects.toThrow('caller gave up');
    expect(await running).toBe('running');
    expect(await pool.run({ op: 'history' })).toEqual(['running']);
  });

  describe('past minWorkers', () => {
    const elastic = {
      workers: 2,
      minWorkers: 1,
      idleTimeoutMs: 200,
      tasksPerWorker: 8,
      roomFor: (task: unknown) => ((task as ScriptedTask).op === 'sleep' ? 2 : 8),
    };

    it('starts a worker for a task that wants one of its own while the others are busy, and stops it once idle', async () => {
      const pool = await start(elastic);
      expect(pool.size).toBe(1);
      let firstDone = false;
      const first = pool.run({ op: 'sleep', ms: 3000, value: 'first' }).then((value) => {
        firstDone = true;
        return value;
      });
      // Held behind the first, it would wait three seconds: it waits for a worker of its own instead.
      expect(await pool.run({ op: 'sleep', ms: 1, value: 'second' })).toBe('second');
      expect(firstDone).toBe(false);
      expect(pool.size).toBe(2);
      expect(await first).toBe('first');
      await vi.waitFor(() => expect(pool.size).toBe(1), { timeout: 5000, interval: 50 });
      expect(await pool.run({ op: 'echo', value: 'after' })).toBe('after');
    });

    it('sends other tasks to the workers it keeps, so that one started for bulk work idles and stops', async () => {
      const pool = await start(elastic);
      const first = pool.run({ op: 'sleep', ms: 1500, value: 'first' });
      expect(await pool.run({ op: 'sleep', ms: 1, value: 'bulk' })).toBe('bulk');
      expect(pool.size).toBe(2);
      // The started worker is idle and the kept one busy: small tasks still wait for the kept one.
      expect(await Promise.all([pool.run({ op: 'echo', value: 'x' }), pool.run({ op: 'echo', value: 'y' })])).toEqual(['x', 'y']);
      await first;
      expect(await pool.run({ op: 'history' })).toEqual(['first', 'x', 'y']);
      await vi.waitFor(() => expect(pool.size).toBe(1), { timeout: 5000, interval: 50 });
    });

    it('keeps the tasks a busy worker can hold on the workers it keeps', async () => {
      const pool = await start(elastic);
      const busy = pool.run({ op: 'sleep', ms: 300, value: 'busy' });
      expect(await Promise.all(['a', 'b', 'c'].map((value) => pool.run({ op: 'echo', value })))).toEqual(['a', 'b', 'c']);
      await busy;
      expect(pool.size).toBe(1);
    });

    it('refuses more workers kept than it may run', async () => {
      await expect(start({ workers: 1, minWorkers: 2 })).rejects.toThrow(RangeError);
    });
  });

  it('gives a task only to a worker with the room roomFor asks for, else it waits in the pool', async () => {
    const pool = await start({ tasksPerWorker: 8, roomFor: (task: unknown) => ((task as ScriptedTask).op === 'sleep' ? 2 : 8) });
    const busy = pool.run({ op: 'sleep', ms: 300, value: 'busy' });
    const held = pool.run({ op: 'echo', value: 'held' });
    const big = pool.run({ op: 'sleep', ms: 10, value: 'big' }, { urgent: true });
    await Promise.all([busy, held, big]);
    // Held by the worker, the urgent task would have run before 'held': it waited for room instead.
    expect(await pool.run({ op: 'history' })).toEqual(['busy', 'held', 'big']);
  });

  it("gives a call's tasks only to a worker with the room the call asks for, in place of roomFor's", async () => {
    const pool = await start({ tasksPerWorker: 8 });
    const busy = pool.run({ op: 'sleep', ms: 300, value: 'busy' });
    const held = pool.run({ op: 'echo', value: 'held' });
    const roomy = pool.run({ op: 'echo', value: 'roomy' }, { urgent: true, room: 2 });
    await Promise.all([busy, held, roomy]);
    // Held by the worker, the urgent task would have run before 'held': it waited for room instead.
    expect(await pool.run({ op: 'history' })).toEqual(['busy', 'held', 'roomy']);
  });

  describe('a worker that runs the tasks it holds together', () => {
    beforeEach(async () => {
      await writeFile(path.join(dir, 'together'), '1');
    });

    it('runs the tasks that wait behind a busy one as one, each call answered with its own result', async () => {
      const pool = await start({ tasksPerWorker: 8 });
      const busy = pool.run({ op: 'sleep', ms: 300, value: 'busy' });
      const echoes = ['a', 'b', 'c', 'd'].map((value) => pool.run({ op: 'echo', value }));
      expect(await Promise.all([busy, ...echoes])).toEqual(['busy', 'a', 'b', 'c', 'd']);
      // At most three fit together; the fourth runs next.
      expect(await pool.run({ op: 'history' })).toEqual(['busy', 'a+b+c', 'd']);
    });

    it('runs urgent tasks first and never with ones that are not', async () => {
      const pool = await start({ tasksPerWorker: 8 });
      const busy = pool.run({ op: 'sleep', ms: 300, value: 'busy' });
      const later = pool.run({ op: 'echo', value: 'later' });
      const urgent = ['u1', 'u2'].map((value) => pool.run({ op: 'echo', value }, { urgent: true }));
      await Promise.all([busy, later, ...urgent]);
      expect(await pool.run({ op: 'history' })).toEqual(['busy', 'u1+u2', 'later']);
    });

    it('retries a failed run task by task, so that only the task that caused it fails', async () => {
      const pool = await start({ tasksPerWorker: 8 });
      const busy = pool.run({ op: 'sleep', ms: 300, value: 'busy' });
      const [a, poison, c] = ['a', 'poison', 'c'].map((value) => pool.run({ op: 'echo', value }));
      await expect(poison).rejects.toThrow('poisoned run');
      expect(await Promise.all([busy, a, c])).toEqual(['busy', 'a', 'c']);
      expect(await pool.run({ op: 'history' })).toEqual(['busy', 'failed a+poison+c', 'a', 'c']);
    });

    it('leaves out a held task whose caller gave up before it ran', async () => {
      const pool = await start({ tasksPerWorker: 8 });
      const busy = pool.run({ op: 'sleep', ms: 300, value: 'busy' });
      const controller = new AbortController();
      const a = pool.run({ op: 'echo', value: 'a' });
      const dropped = pool.run({ op: 'echo', value: 'dropped' }, { signal: controller.signal });
      const c = pool.run({ op: 'echo', value: 'c' });
      controller.abort(new Error('caller gave up'));
      await expect(dropped).rejects.toThrow('caller gave up');
      expect(await Promise.all([busy, a, c])).toEqual(['busy', 'a', 'c']);
      expect(await pool.run({ op: 'history' })).toEqual(['busy', 'a+c']);
    });
  });

  it('rejects the task of a crashed worker with crashedError and replaces the worker', async () => {
    const pool = await start({ workers: 2 });
    await expect(pool.run({ op: 'crash' })).rejects.toBeInstanceOf(ScriptedCrashError);
    expect(pool.size).toBe(2);
    expect(await Promise.all([pool.run({ op: 'echo', value: 'a' }), pool.run({ op: 'echo', value: 'b' })])).toEqual(['a', 'b']);
    expect(pool.size).toBe(2);
  });

  it('retries a replacement that fails to set up', async () => {
    const pool = await start({ maxFailedRestarts: 3 });
    await writeFile(path.join(dir, 'fail-next'), '2');
    await crash(pool);
    // Waits through two failed replacements for the third.
    expect(await pool.run({ op: 'echo', value: 'x' })).toBe('x');
    expect(pool.size).toBe(1);
  });

  it('gives up after maxFailedRestarts replacements in a row fail to start', async () => {
    const pool = await start({ maxFailedRestarts: 2 });
    await writeFile(path.join(dir, 'fail-next'), '10');
    await crash(pool);
    const waiting = pool.run({ op: 'echo', value: 'x' });
    await expect(waiting).rejects.toBeInstanceOf(ScriptedCrashError);
    await expect(waiting).rejects.toThrow(/keep failing to start; giving up after 2 attempts: scripted setup failure/);
    expect(pool.size).toBe(0);
    await expect(pool.run({ op: 'echo', value: 'y' })).rejects.toBeInstanceOf(ScriptedCrashError);
  });

  it('does not use a replacement that comes up as something else', async () => {
    const pool = await start({ maxFailedRestarts: 2 });
    await writeFile(path.join(dir, 'identity'), 'v2');
    await crash(pool);
    await expect(pool.run({ op: 'echo', value: 'x' })).rejects.toThrow(/came up as \{"identity":"v2"\}, pool is \{"identity":"v1"\}/);
  });

  it.runIf(process.platform === 'linux')('gives its workers the niceness and young generation it is given', async () => {
    const thread = async (pool: Pool) => JSON.parse((await pool.run({ op: 'thread' })) as string) as { niceness: number; youngGenerationMb: number };
    const own = os.getPriority();
    const plain = await thread(await start());
    expect(plain.niceness).toBe(own);
    const tuned = await thread(await start({ niceness: Math.min(19, own + 5), resourceLimits: { maxYoungGenerationSizeMb: 8 } }));
    expect(tuned).toEqual({ niceness: Math.min(19, own + 5), youngGenerationMb: 8 });
    expect(os.getPriority()).toBe(own);
  });

  it('rejects pending tasks on close, and calls after it', async () => {
    const pool = await start();
    const inFlight = expect(pool.run({ op: 'sleep', ms: 300, value: 'slow' })).rejects.toThrow('ScriptedPool was closed');
    await pool.close();
    await inFlight;
    await expect(pool.run({ op: 'echo', value: 'x' })).rejects.toThrow('ScriptedPool is closed');
    expect(pool.size).toBe(0);
  });
});
