/**
 * Why the firewall quarantines a memory, as a memory carries it: the memory types name these, and
 * the firewall's rules (firewall/firewall-rules.ts) find them.
 */
export const QUARANTINE_REASONS = [
  'override',
  'standing_order',
  'role_marker',
  'exfiltration',
  'hidden_text',
  'similar_to_injection',
  'second_opinion',
] as const;
export type QuarantineReason = (typeof QUARANTINE_REASONS)[number];
