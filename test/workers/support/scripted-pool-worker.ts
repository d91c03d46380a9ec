/**
 * A WorkerPool entry for exercising the pool itself. Setup reads the folder it is given:
 * `fail-next` (a count) makes that many setups fail in a row, `identity` is what the worker
 * reports (default 'v1'). Tasks: echo a value (recorded in the worker's history), sleep, throw,
 * crash the worker, or return the history.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { servePoolTasks } from '../../../src/workers/pool-worker.js';

export interface ScriptedInit {
  dir: string;
}

export type ScriptedTask = { op: 'echo'; value: string } | { op: 'sleep'; ms: number; value: string } | { op: 'throw' } | { op: 'crash' } | { op: 'history' };

export default await servePoolTasks(async ({ dir }: ScriptedInit) => {
  const failFile = path.join(dir, 'fail-next');
  const failNext = existsSync(failFile) ? Number(readFileSync(failFile, 'utf8')) : 0;
  if (failNext > 0) {
    writeFileSync(failFile, String(failNext - 1));
    throw new Error('scripted setup failure');
  }
  const identityFile = path.join(dir, 'identity');
  const identity = existsSync(identityFile) ? readFileSync(identityFile, 'utf8') : 'v1';
  const history: string[] = [];
  return {
    info: { identity },
    run: async (task: ScriptedTask): Promise<string | string[]> => {
      switch (task.op) {
        case 'echo':
          history.push(task.value);
          return task.value;
        case 'sleep':
          history.push(task.value);
          await new Promise((resolve) => setTimeout(resolve, task.ms));
          return task.value;
        case 'throw':
          throw new Error('scripted task failure');
        case 'crash':
          setTimeout(() => {
            throw new Error('scripted worker crash');
          });
          return new Promise(() => {});
        case 'history':
          return [...history];
      }
    },
  };
});
