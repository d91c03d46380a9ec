/**
 * Follow-ups one run queues at most. They live in the run's row (a jsonb list rewritten with each
 * one added) and each becomes a turn of its own, so an unbounded queue is unbounded work and row
 * growth on a client's say; a conversation needing more waits for the queue to drain.
 */
export const FOLLOW_UPS_MAX = 32;
