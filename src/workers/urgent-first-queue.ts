import type { TaskQueue } from 'piscina';

type QueuedTask = Parameters<TaskQueue['push']>[0];

/** Whether piscina's task wraps an envelope marked urgent (see TaskEnvelope.urgent). */
const isUrgent = (task: QueuedTask) => (task as { task?: { urgent?: boolean } }).task?.urgent === true;

/**
 * Piscina's queue of tasks waiting for a worker, in two lines: urgent tasks (a search waiting for
 * its query's vector) leave before any other, each line first in, first out. Without it a query
 * waits behind every embedding the writers queued before it.
 */
export class UrgentFirstQueue implements TaskQueue {
  private readonly urgent: QueuedTask[] = [];
  private readonly rest: QueuedTask[] = [];

  get size(): number {
    return this.urgent.length + this.rest.length;
  }

  shift(): QueuedTask | null {
    return this.urgent.shift() ?? this.rest.shift() ?? null;
  }

  push(task: QueuedTask): void {
    (isUrgent(task) ? this.urgent : this.rest).push(task);
  }

  /** A task that found no free worker goes back to the head of its line. */
  unshift(task: QueuedTask): void {
    (isUrgent(task) ? this.urgent : this.rest).unshift(task);
  }

  remove(task: QueuedTask): void {
    for (const line of [this.urgent, this.rest]) {
      const at = line.indexOf(task);
      if (at >= 0) {
        line.splice(at, 1);
        return;
      }
    }
  }
}
