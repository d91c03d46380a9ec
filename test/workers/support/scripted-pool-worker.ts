/**
 * A WorkerPool entry for exercising the pool itself. Setup reads the folder it is given:
 * `fail-next` (a count) makes that many setups fail in a row, `identity` is what the worker
 * reports (default 'v1'), `together` makes the worker run the echo tasks it holds together (at
 * most three, recorded as one entry `a+b+c`; one echoing 'poison' fails a run, alone or together,
 * and a joint run it fails is recorded as `failed a+poison+c`).
 * Tasks: echo a value (recorded in the worker's history), sleep, throw, crash the worker, return
 * the history, or describe the worker's thread (its niceness from /proc, its V8 resource limits).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { resourceLimits } from 'node:worker_threads';
import { servePoolTasks } from '../../../src/workers/pool-worker.js';

export interface ScriptedInit {
  dir: string;
}

export type ScriptedTask =
  | { op: 'echo'; value: string }
  | { op: 'sleep'; ms: number; value: string }
  | { op: 'throw' }
  | { op: 'crash' }
  | { op: 'history' }
  | { op: 'thread' };

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
  const echoes = (tasks: readonly ScriptedTask[]) => tasks.flatMap((t) => (t.op === 'echo' ? [t.value] : []));
  const together = existsSync(path.join(dir, 'together'))
    ? {
        fits: (tasks: readonly ScriptedTask[]) => tasks.length <= 3 && echoes(tasks).length === tasks.length,
        run: async (tasks: ScriptedTask[]): Promise<string[]> => {
          const values = echoes(tasks);
          if (values.includes('poison')) {
            history.push(`failed ${values.join('+')}`);
            throw new Error('poisoned run');
          }
          history.push(values.join('+'));
          return values;
        },
      }
    : undefined;
  return {
    info: { identity },
    ...(together ? { together } : {}),
    run: async (task: ScriptedTask): Promise<string | string[]> => {
      switch (task.op) {
        case 'echo':
          if (task.value === 'poison') throw new Error('poisoned run');
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
        case 'thread': {
          // /proc/thread-self/stat: the 19th field after the command's closing parenthesis is the niceness.
          const stat = readFileSync('/proc/thread-self/stat', 'utf8');
          const niceness = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
          return JSON.stringify({ niceness, youngGenerationMb: resourceLimits.maxYoungGenerationSizeMb });
        }
      }
    },
  };
});
