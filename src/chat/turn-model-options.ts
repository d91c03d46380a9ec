import type { AgentSettings } from '../agents/agent-config.js';
import type { AgentEvent, AgentTurnOptions } from '../llm/agent-loop.js';
import { mergeSampling } from '../llm/sampling.js';
import type { RunState } from '../runs/run-types.js';
import type { ChatEvent } from './chat-reply.js';
import type { ChatRequest } from './chat-service-types.js';

type TurnRequest = RunState['request'];

/** What of a chat request asks of the model (sampling, reasoning, the reply's reasoning), kept with the run for its resumption. */
export function modelRequestOf(request: Pick<ChatRequest, 'turnInstructions' | 'sampling' | 'reasoning' | 'includeReasoning'>): Partial<TurnRequest> {
  return {
    ...(request.turnInstructions ? { turnInstructions: request.turnInstructions } : {}),
    ...(request.sampling ? { sampling: request.sampling } : {}),
    ...(request.reasoning ? { reasoning: request.reasoning } : {}),
    ...(request.includeReasoning ? { includeReasoning: true } : {}),
  };
}

/** The loop's model options for a turn: the request's sampling and reasoning over the agent's, and its truncation setting. */
export function modelOptionsOf(settings: AgentSettings | null, request: TurnRequest): Pick<AgentTurnOptions, 'callOptions' | 'maxContinuations'> {
  const sampling = mergeSampling(settings?.sampling, request.sampling);
  const effort = request.reasoning?.effort ?? settings?.reasoning?.effort;
  const callOptions = {
    ...(sampling && Object.keys(sampling).length > 0 ? { sampling } : {}),
    ...(effort ? { reasoningEffort: effort } : {}),
  };
  const maxContinuations = settings?.truncation?.maxContinuations;
  return {
    ...(Object.keys(callOptions).length > 0 ? { callOptions } : {}),
    ...(maxContinuations !== undefined ? { maxContinuations } : {}),
  };
}

/** The loop's own events as the chat tells them (reasoning, model calls, retries); undefined for the others. */
export function loopEventOf(event: AgentEvent): ChatEvent | undefined {
  switch (event.type) {
    case 'thinking':
      return { type: 'thinking', text: event.text };
    case 'turn_start':
      return { type: 'turn_start', iteration: event.iteration };
    case 'turn_end':
      return { type: 'turn_end', iteration: event.iteration, finishReason: event.finishReason, usage: turnUsage(event.usage) };
    case 'retry':
      return { type: 'retry', attempt: event.attempt, delayMs: event.delayMs, status: event.status, reason: event.reason };
    default:
      return undefined;
  }
}

function turnUsage(usage: Extract<AgentEvent, { type: 'turn_end' }>['usage']): Extract<ChatEvent, { type: 'turn_end' }>['usage'] {
  return { ...usage, totalTokens: usage.promptTokens + usage.completionTokens };
}
