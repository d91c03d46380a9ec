/**
 * Candidates each side of a hybrid search over small units (memories, turns) returns: five times
 * topK, for the fusion to choose from, at least 50 (cheap, and it lets a keyword-only match of a
 * small topK in), at most 1000 unless topK itself asks for more. Vector and text modes rank their
 * own topK.
 */
export function hybridCandidates(topK: number): number {
  return Math.max(topK, Math.min(Math.max(topK * 5, 50), 1000));
}
