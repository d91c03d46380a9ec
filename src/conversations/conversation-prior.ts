import { diversifyByConversation } from './conversation-diversity.js';
import type { RankedConversation } from './conversation-ranking.js';

/**
 * How much a turn's conversation counts in a hybrid turn list's order, beside the turn itself:
 * past the first CONVERSATION_PRIOR_KEPT turns of the diversity pick, a turn is ordered by
 * 1 / (k + its place) + PRIOR × share / (k + 1), k 20, where its conversation's share is its score
 * as `groupBy: "conversation"` ranks them over the best one's, and picked for diversity on that. A
 * session about the question holds most of its answers, and the embedder (fed back,
 * CONVERSATION_VECTOR_FEEDBACK) tells which sessions are about it better than a turn's words do:
 * the turn that says the question's words best may sit in one that is not. By share, not by place:
 * several sessions scored alike (a question whose answer spans them) are taken alike, and one far
 * ahead of the next (its answer is in one session) keeps its turns together. Chosen on
 * LongMemEval's tuning part against SQuAD's turn calibration: session R_all@5 / turn R_all@10
 * 0.94 / 0.87 by place (4, five kept) → 0.95 / 0.90, SQuAD's turn hit@5 0.9050 → 0.9045
 * (docs/benchmarks/longmemeval.md, calibrate-turns.md).
 */
export const CONVERSATION_PRIOR = 2.5;

/**
 * CONVERSATION_PRIOR where an embedder's own tuning chose another. The static model distilled from
 * USE lite ranks sessions worse than its teacher, and its prior costs turns: on LongMemEval's
 * tuning part (PGlite, `BENCH_TUNE` over conversationPrior 0 / 2 / 4, the conversations' feedback
 * weight 0 / 3 and vector weight 1 / 2), session R_all@5 / @10 / turn R_all@10 0.87 / 0.93 / 0.83
 * without it, 0.86–0.87 / 0.93–0.94 / 0.79–0.82 at every setting with it; multi-session turn
 * R_all@10 0.47 without (BM25 over turns' own figure) against 0.33–0.47. Its second version, tuned
 * for search, ranks sessions well enough to keep the default: 0.93 / 0.97 / 0.82 at 4 by place
 * against 0.89 / 0.93 / 0.85 without (multi-session R_all@5 0.80 against 0.67; PostgreSQL, the same
 * grid), 0.94 / 0.97 / 0.85 at the default by share (PGlite; docs/benchmarks/static-embedder.md).
 */
export const CONVERSATION_PRIOR_BY_EMBEDDER: Readonly<Record<string, number>> = Object.freeze({ 'static:use-lite-distilled-v1': 0 });

export function conversationPriorFor(embedderId: string): number {
  return CONVERSATION_PRIOR_BY_EMBEDDER[embedderId] ?? CONVERSATION_PRIOR;
}

/**
 * The first turns of the diversity pick, which keep their places whatever their conversations':
 * a single-fact question's answer is one turn, and a wrong session ranked first would push it
 * down (SQuAD's turn hit@5 0.905 → 0.797 with none kept, 0.9045 with four).
 */
export const CONVERSATION_PRIOR_KEPT = 4;

/**
 * Conversations a long turn list covers early: when its first page (CONVERSATION_COVERAGE_PAGE
 * turns, as ranked by everything else) holds fewer, the best turn of each conversation ranked
 * first that it lacks follows the page, in the conversations' order, until it holds this many. A
 * question whose answer spans several sessions needs each of them in the list soon, and the
 * conversations' ranking finds sessions better than a turn list does. LongMemEval's tuning part:
 * session R_all@5 0.93 → 0.94, turn R_all@10 unchanged (docs/benchmarks/longmemeval.md). The page
 * is left as it was, so a list of ten or fewer is unchanged.
 */
export const CONVERSATION_COVERAGE = 5;

/** The turns a list keeps as ranked before CONVERSATION_COVERAGE adds conversations. */
export const CONVERSATION_COVERAGE_PAGE = 10;

const K = 20;

/** Where a conversation stands in a ranking: its 1-based place, and its share of the first one's score (0 to 1, see conversationStandings). */
export interface ConversationStanding {
  place: number;
  share: number;
}

export interface ConversationPriorOptions {
  /** Each conversation's standing (see conversationStandings); without it, the diversity pick alone. */
  standings?: ReadonlyMap<string, ConversationStanding>;
  prior?: number;
  kept?: number;
  /** See SAME_CONVERSATION_DECAY and SAME_CONVERSATION_FREE_TURNS. */
  decay?: number;
  freeTurns?: number;
}

/**
 * Each conversation's standing in a ranking, best first. A conversation counts at least as much as
 * every one ranked below it: the time window's boost moves a conversation up by place and leaves
 * its score, and one it lifted past better-scored ones takes the best score among them.
 */
export function conversationStandings(ranked: readonly RankedConversation<unknown>[]): ReadonlyMap<string, ConversationStanding> {
  const counted = ranked.map((c) => Math.max(0, c.score));
  for (let i = counted.length - 2; i >= 0; i--) counted[i] = Math.max(counted[i]!, counted[i + 1]!);
  const best = counted[0] ?? 0;
  return new Map(ranked.map((c, i) => [c.conversationId, { place: i + 1, share: best > 0 ? counted[i]! / best : 0 }]));
}

/**
 * The hits as the diversity pick orders them, then, past the kept ones, by their places and their
 * conversations' shares (see CONVERSATION_PRIOR), picked for diversity again with the kept turns
 * counted. A conversation the ranking lacks has no share. Scores are left as they were.
 */
export function orderByConversations<T extends { score: number; conversationId: string }>(hits: readonly T[], options: ConversationPriorOptions = {}): T[] {
  const { standings, prior = CONVERSATION_PRIOR, kept = CONVERSATION_PRIOR_KEPT, decay, freeTurns } = options;
  const picked = diversifyByConversation(hits, decay, freeTurns);
  if (prior === 0 || !standings || picked.length <= kept) return picked;
  const first = picked.slice(0, kept);
  const keyed = picked
    .slice(kept)
    .map((hit, i) => ({
      score: 1 / (K + kept + i + 1) + (prior * (standings.get(hit.conversationId)?.share ?? 0)) / (K + 1),
      conversationId: hit.conversationId,
      hit,
    }))
    .sort((a, b) => b.score - a.score);
  const taken = new Map<string, number>();
  for (const hit of first) taken.set(hit.conversationId, (taken.get(hit.conversationId) ?? 0) + 1);
  return [...first, ...diversifyByConversation(keyed, decay, freeTurns, taken).map((k) => k.hit)];
}

/**
 * See CONVERSATION_COVERAGE: the best turns of the best-placed conversations the first `page`
 * lacks moved to follow it. Scores are left as they were.
 */
export function coverConversations<T extends { conversationId: string }>(
  hits: readonly T[],
  standings: ReadonlyMap<string, ConversationStanding>,
  coverage = CONVERSATION_COVERAGE,
  page = CONVERSATION_COVERAGE_PAGE,
): T[] {
  const head = hits.slice(0, page);
  const covered = new Set(head.map((hit) => hit.conversationId));
  if (covered.size >= coverage || hits.length <= page) return [...hits];
  const bestTurn = new Map<string, T>();
  for (const hit of hits.slice(page)) if (!covered.has(hit.conversationId) && !bestTurn.has(hit.conversationId)) bestTurn.set(hit.conversationId, hit);
  const missing = [...bestTurn.keys()]
    .filter((id) => standings.has(id))
    .sort((a, b) => standings.get(a)!.place - standings.get(b)!.place)
    .slice(0, coverage - covered.size);
  const moved = new Set(missing.map((id) => bestTurn.get(id)!));
  return [...head, ...missing.map((id) => bestTurn.get(id)!), ...hits.slice(page).filter((hit) => !moved.has(hit))];
}
