import type { Hono } from 'hono';
import { expect } from 'vitest';
import type { AppContext } from '../../../src/app-context.js';
import { type ScriptedLlmServer, type ScriptedReply, type ScriptedRequest, reply } from '../../../testkit/scripted-llm-server.js';
import type { DatabaseDriver } from '../../support/database-drivers.js';
import { type JsonReply, call } from '../http-test-context.js';
import { scriptedAgentApp } from './scripted-agent-app.js';

/**
 * Agents that delegate: the lead's `delegate` calls run other agents as child runs. The scripted
 * model answers by the agent whose instructions the request carries, so each agent has a script.
 */

export type Agents = Record<string, Array<ScriptedReply | ((request: ScriptedRequest) => ScriptedReply)>>;

export const MARK = (id: string) => `[INSTRUCTIONS-OF-${id.toUpperCase()}]`;
export const systemOf = (request: ScriptedRequest) => String(request.body.messages.find((m) => m.role === 'system')?.content ?? '');
const agentOf = (request: ScriptedRequest, ids: string[]) => ids.find((id) => systemOf(request).includes(MARK(id)));
export const delegateCall = (id: string, role: string, task: string) => ({ id, name: 'delegate', arguments: JSON.stringify({ role, task }) });
export const toolMessages = (request: ScriptedRequest) => request.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

export interface DelegatingAgents {
  ctx(): AppContext;
  /** An app whose model answers each agent from its own queue; `requestsOf(id)` are the requests it got. */
  appFor(agents: Agents): Promise<{ app: Hono; llm: ScriptedLlmServer; requestsOf: (id: string) => ScriptedRequest[] }>;
  /** Creates agent `id`, its instructions its MARK. */
  agent(app: Hono, id: string, settings?: Record<string, unknown>): Promise<void>;
  chat(app: Hono, agentId: string, message?: string, extra?: Record<string, unknown>): Promise<JsonReply>;
}

/** Registers, in the calling `describeOnDrivers` body, the scripted app and runs cleared before each test. */
export function delegatingAgents(driver: DatabaseDriver): DelegatingAgents {
  const { ctx, appWithLlm } = scriptedAgentApp(driver, { clear: { also: ['runs'] } });
  return {
    ctx,
    async appFor(agents) {
      const ids = Object.keys(agents);
      const queues = Object.fromEntries(ids.map((id) => [id, [...agents[id]!]]));
      const made = await appWithLlm((request) => {
        const id = agentOf(request, ids);
        const next = id ? queues[id]!.shift() : undefined;
        if (!next) return reply.error(500, { message: `no script for ${id ?? 'an unknown agent'}` });
        return typeof next === 'function' ? next(request) : next;
      });
      return { ...made, requestsOf: (id) => made.llm.requests.filter((r) => agentOf(r, ids) === id) };
    },
    async agent(app, id, settings = {}) {
      const res = await call(app, 'POST', '/v1/agents', { id, name: id, instructions: MARK(id), ...settings });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    },
    chat: (app, agentId, message = 'Please help', extra = {}) => call(app, 'POST', '/v1/chat', { message, agentId, userId: 'u1', ...extra }),
  };
}
