import type { AgentEvent, AgentSteering, PendingCalls } from './agent-types.js';
import type { ChatMessage } from './messages.js';

/** Nothing waits for the client: a turn paused on request resumes by calling the model again. */
export const nothingPending = (): PendingCalls => ({ approvals: [], clientCalls: [] });

/**
 * The messages steering the turn join it as user messages, after the tool results in flight and
 * before the next model call; each is told to the listeners as it joins.
 */
export function joinSteering(
  steering: AgentSteering | undefined,
  newMessages: ChatMessage[],
  iteration: number,
  onEvent: ((event: AgentEvent) => void) | undefined,
): void {
  if (!steering) return;
  for (const message of steering.drain()) {
    newMessages.push({ role: 'user', content: message });
    onEvent?.({ type: 'steer', message, iteration });
  }
}

/**
 * A turn ending without a pause makes no more model calls: its steering is closed, so that later
 * messages are refused (409) instead of accepted and lost. Messages that came during its last call
 * (a budget stop, or a resumed turn at its iteration limit) join its record, as they would have
 * joined the next call: accepted, they are kept, though no model call answers them.
 */
export function closeSteering(
  steering: AgentSteering | undefined,
  newMessages: ChatMessage[],
  iteration: number,
  onEvent: ((event: AgentEvent) => void) | undefined,
): void {
  if (!steering) return;
  for (const message of steering.close()) {
    newMessages.push({ role: 'user', content: message });
    onEvent?.({ type: 'steer', message, iteration });
  }
}
