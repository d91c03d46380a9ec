import type { Workflow, WorkflowDefinition, WorkflowVersion } from './workflow-definition.js';

export interface WorkflowPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** Refused: a workflow with this id exists already in the tenant. */
export class WorkflowExistsError extends Error {
  constructor(readonly id: string) {
    super(`A workflow with id ${JSON.stringify(id)} exists already`);
    this.name = 'WorkflowExistsError';
  }
}

/** A tenant's workflows, versioned as agents are: every change writes a new version. */
export interface WorkflowStore {
  create(id: string, definition: WorkflowDefinition): Promise<Workflow>;
  get(id: string): Promise<Workflow | null>;
  list(options: { limit?: number; cursor?: string }): Promise<WorkflowPage<Workflow>>;
  /**
   * Writes what `change` makes of the current definition as a new version (none when it is the
   * same), the workflow locked meanwhile; `change` may throw to refuse. Null when there is none.
   */
  update(id: string, change: (current: WorkflowDefinition) => WorkflowDefinition): Promise<Workflow | null>;
  delete(id: string): Promise<boolean>;
  versions(id: string, options: { limit?: number; cursor?: string }): Promise<WorkflowPage<WorkflowVersion> | null>;
}
