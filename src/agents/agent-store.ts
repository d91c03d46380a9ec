import type { Agent, AgentSettings, AgentVersion } from './agent-config.js';

export interface AgentPage<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * A change to an agent: a field given replaces the current value, `null` clears it (back to the
 * deployment's default); `name` cannot be cleared.
 */
export type AgentPatch = { [K in keyof AgentSettings]?: K extends 'name' ? AgentSettings[K] : AgentSettings[K] | null };

/** Refused: an agent with this id exists already in the tenant. */
export class AgentExistsError extends Error {
  constructor(readonly id: string) {
    super(`An agent with id ${JSON.stringify(id)} exists already`);
    this.name = 'AgentExistsError';
  }
}

export interface AgentUpdateOptions {
  /**
   * Called in the update's transaction, with the agent locked, on the settings the patch would
   * leave: throwing refuses the update with nothing written. For checks against the current
   * settings (a new model without a price under an existing budget), without a race with another update.
   */
  check?(next: AgentSettings, current: Agent): void;
}

/** The agents of one tenant (see `TenantScoped`). Every change writes a new version in the same transaction. */
export interface AgentStore {
  /** Version 1. Throws AgentExistsError when the id is taken. */
  create(id: string, settings: AgentSettings): Promise<Agent>;
  get(id: string): Promise<Agent | null>;
  /** Newest first. */
  list(options: { limit?: number; cursor?: string }): Promise<AgentPage<Agent>>;
  /** A new version when something changed (the same one when nothing did); null when there is no such agent. */
  update(id: string, patch: AgentPatch, options?: AgentUpdateOptions): Promise<Agent | null>;
  /** Deletes the agent and its versions; its memories and conversations stay (the id is a namespace). */
  delete(id: string): Promise<boolean>;
  /** Newest version first; null when there is no such agent. */
  versions(id: string, options: { limit?: number; cursor?: string }): Promise<AgentPage<AgentVersion> | null>;
  getVersion(id: string, version: number): Promise<AgentVersion | null>;
}
