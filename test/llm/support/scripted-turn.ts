import { afterEach } from 'vitest';
import { z } from 'zod';
import type { AgentTurnOptions } from '../../../src/llm/agent-loop.js';
import type { ClientTool } from '../../../src/llm/agent-types.js';
import { createLlmProvider } from '../../../src/llm/llm-provider.js';
import { defineTool } from '../../../src/llm/tool.js';
import { type Script, type ScriptedLlmServer, startScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';

export interface ScriptedTurn {
  /** The built-in tools' runs of the current test, as `lookup:<word>` and `erase:<id>`. */
  readonly ran: string[];
  /** A scripted model and the turn options over it: tools lookup and erase (erase needs approval) and `clientTool`. */
  start(script: Script): Promise<{ server: ScriptedLlmServer; base: AgentTurnOptions }>;
}

/**
 * Registers, in the calling file, the closing of the scripted model after each test, and returns
 * the agent loop's set-up over it: one attempt only, so that error tests do not sit in backoff.
 */
export function scriptedTurn(clientTool: ClientTool): ScriptedTurn {
  const ran: string[] = [];
  let server: ScriptedLlmServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const lookup = defineTool({
    name: 'lookup',
    description: 'Look a word up in the dictionary',
    parameters: z.object({ word: z.string() }),
    execute: ({ word }) => {
      ran.push(`lookup:${word}`);
      return `meaning of ${word}`;
    },
  });
  const erase = defineTool({
    name: 'erase',
    description: 'Erase a record',
    parameters: z.object({ id: z.string() }),
    execute: ({ id }) => {
      ran.push(`erase:${id}`);
      return { erased: id };
    },
  });

  return {
    ran,
    async start(script) {
      ran.length = 0;
      server = await startScriptedLlmServer(script);
      const provider = createLlmProvider({ baseURL: server.url, apiKey: 'k', model: 'test-model', retry: { maxAttempts: 1 } });
      const base: AgentTurnOptions = {
        provider,
        messages: [{ role: 'user', content: 'hello' }],
        tools: [lookup, erase],
        clientTools: [clientTool],
        needsApproval: (call) => call.name === 'erase',
      };
      return { server, base };
    },
  };
}
