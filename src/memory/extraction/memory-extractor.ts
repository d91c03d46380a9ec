import { type Summarizer, SummarizerTimeoutError } from '../../compaction/summarizer.js';
import { recordExtractionDecision, recordExtractionFailure, recordExtractionRun } from '../../observability/metrics.js';
import { contentSchema } from '../memory-fields.js';
import type { AppliedChange, MemoryChange, MemoryScope, MemoryStore, ValidTime } from '../memory-types.js';
import { type DecisionEvent, type ExtractedFact, MalformedExtractionOutput, type ParsedDecision, parseDecisions, parseFacts } from './extraction-output.js';
import {
  FACT_EXTRACTION_INSTRUCTIONS,
  MEMORY_DECISION_INSTRUCTIONS,
  type PromptMessage,
  renderConversation,
  renderDecisionInput,
} from './extraction-prompts.js';
import { locateQuote } from './quote-location.js';

export interface ExtractionRequest {
  messages: readonly PromptMessage[];
  /** Whose memories: the facts are about this agent's user (or, without one, the agent's shared memory). */
  scope: MemoryScope;
  /** The turn the facts come from, named in the new memories' metadata and their history. */
  source?: { conversationId: string; turn: number };
  /** When the messages were written: the times they name ("last year") are read against it. Default now. */
  at?: Date;
  /**
   * A model request that fails (an error, a timeout, a reply that is not the JSON asked for)
   * throws ExtractionStepError, having written nothing, instead of being counted in `failures`:
   * a job retries the whole extraction. Single unusable decisions are still counted and skipped.
   */
  failOnModelError?: boolean;
  /** Awaited just before the decisions are written; what it throws, the extraction throws, having written nothing. */
  beforeApply?: () => Promise<void>;
  signal?: AbortSignal;
}

/** A model request of an extraction failed as a whole (see `failOnModelError`); nothing was written. */
export class ExtractionStepError extends Error {
  constructor(
    readonly reason: 'llm_error' | 'timeout' | 'malformed_output',
    options: { cause: unknown },
  ) {
    super(`memory extraction failed (${reason}): ${(options.cause as Error)?.message ?? String(options.cause)}`, options);
    this.name = 'ExtractionStepError';
  }
}

export interface ExtractionDecision {
  event: DecisionEvent;
  /** The fact as extracted. */
  fact: string;
  /** What the memory holds after the decision (ADD, UPDATE). */
  content?: string;
  key?: string;
  previousContent?: string;
  status: 'applied' | 'skipped';
  reason?: string;
}

export interface ExtractionResult {
  decisions: ExtractionDecision[];
  /** Steps or decisions skipped because the model failed or answered something unusable. */
  failures: number;
}

export interface MemoryExtractor {
  extract(request: ExtractionRequest): Promise<ExtractionResult>;
}

export interface MemoryExtractorOptions {
  /** The chat's model, with the extraction's timeout. */
  summarizer: Summarizer;
  memories: MemoryStore;
  /** Existing memories shown to the model per fact. Default 5. */
  similarPerFact?: number;
  /** Told of every failure (logged by the caller), beside the metrics, with the turn it was about. */
  onFailure?: (reason: string, error: unknown, source: ExtractionRequest['source']) => void;
}

type FailureReason = 'llm_error' | 'timeout' | 'malformed_output' | 'unknown_id' | 'unknown_fact' | 'conflicting_decision' | 'invalid_content';

/**
 * Turns a conversation's facts into memory decisions, Mem0's way, with Zep's invalidation: the
 * model proposes facts, sees the closest live memories of the scope under small integer ids, and
 * decides ADD, UPDATE, INVALIDATE or NONE per fact. Ids are mapped back to keys here, so an id the
 * model invents is caught, never written. All decisions apply in one transaction; a failure at any
 * step skips what it touches, is counted in /metrics and reported, and writes nothing half.
 */
export function createMemoryExtractor(options: MemoryExtractorOptions): MemoryExtractor {
  const { summarizer, memories } = options;
  const similarPerFact = options.similarPerFact ?? 5;

  return {
    async extract(request) {
      let failures = 0;
      const fail = (reason: FailureReason, error: unknown) => {
        failures += 1;
        recordExtractionFailure(reason);
        options.onFailure?.(reason, error, request.source);
      };
      /** A whole request failed: counted, and thrown when the caller retries instead. */
      const stepFailed = (reason: ExtractionStepError['reason'], error: unknown) => {
        fail(reason, error);
        if (!request.failOnModelError) return;
        recordExtractionRun('failed');
        throw new ExtractionStepError(reason, { cause: error });
      };
      const ask = async (instructions: string, input: string): Promise<string | undefined> => {
        try {
          return await summarizer.summarize({ instructions, input, signal: request.signal });
        } catch (error) {
          if (request.signal?.aborted) throw error;
          stepFailed(error instanceof SummarizerTimeoutError ? 'timeout' : 'llm_error', error);
          return undefined;
        }
      };
      const finish = (decisions: ExtractionDecision[], outcome: 'ok' | 'empty' | 'failed'): ExtractionResult => {
        recordExtractionRun(outcome);
        for (const d of decisions) recordExtractionDecision(d.event, d.status);
        return { decisions, failures };
      };

      const messages = request.messages.filter((m) => m.content.trim() !== '');
      if (messages.length === 0) return finish([], 'empty');
      const factsReply = await ask(FACT_EXTRACTION_INSTRUCTIONS, renderConversation(messages, request.at));
      if (factsReply === undefined) return finish([], 'failed');
      let facts: ExtractedFact[];
      try {
        const parsed = parseFacts(factsReply);
        facts = parsed.facts;
        for (let i = 0; i < parsed.dropped; i++) fail('invalid_content', new Error('an extracted fact was not storable'));
      } catch (error) {
        if (!(error instanceof MalformedExtractionOutput)) throw error;
        stepFailed('malformed_output', error);
        return finish([], 'failed');
      }
      if (facts.length === 0) return finish([], 'empty');

      // The closest live memories of the scope, numbered in the order found: the model sees ids, never keys.
      const searchScope = { agentId: request.scope.agentId, userId: request.scope.userId ?? '' };
      const known: { key: string; content: string; validFrom: Date | null; validUntil: Date | null }[] = [];
      const idOfKey = new Map<string, number>();
      for (const fact of facts) {
        for (const hit of await memories.search(fact.content, { ...searchScope, topK: similarPerFact, mode: 'hybrid' })) {
          if (idOfKey.has(hit.memory.key)) continue;
          idOfKey.set(hit.memory.key, known.length);
          const { key, content, validFrom, validUntil } = hit.memory;
          known.push({ key, content, validFrom, validUntil });
        }
      }

      const decisionsReply = await ask(
        MEMORY_DECISION_INSTRUCTIONS,
        renderDecisionInput(
          facts.map((f) => f.content),
          known.map((m) => m.content),
        ),
      );
      const skippedAll = (reason: string) => facts.map((f): ExtractionDecision => ({ event: 'NONE', fact: f.content, status: 'skipped', reason }));
      if (decisionsReply === undefined) return finish(skippedAll('the model did not answer'), 'failed');
      let parsed: ParsedDecision[];
      try {
        const result = parseDecisions(decisionsReply);
        parsed = result.decisions;
        for (let i = 0; i < result.malformed; i++) fail('malformed_output', new Error('a malformed decision'));
      } catch (error) {
        if (!(error instanceof MalformedExtractionOutput)) throw error;
        stepFailed('malformed_output', error);
        return finish(skippedAll('the model answered no usable decisions'), 'failed');
      }

      // One decision per fact and per memory: the first one given wins, later ones are skipped.
      const decided = new Set<number>();
      const touched = new Set<number>();
      const decisions: ExtractionDecision[] = [];
      const changes: { change: MemoryChange; decision: ExtractionDecision }[] = [];
      const source = request.source;
      // Only the user's words are quoted: the assistant's are not the user's word for anything.
      const userMessages = messages.filter((m) => m.role === 'user').map((m) => m.content);
      const quoteOf = (fact: ExtractedFact) => {
        const quote = locateQuote(userMessages, fact.content, fact.quote);
        return quote ? { quote } : {};
      };
      for (const d of parsed) {
        const fact = facts[d.fact];
        if (!fact) {
          fail('unknown_fact', new Error(`decision for fact ${d.fact}, of ${facts.length}`));
          continue;
        }
        const decision: ExtractionDecision = { event: d.event, fact: fact.content, status: 'skipped' };
        decisions.push(decision);
        if (decided.has(d.fact)) {
          decision.reason = 'a fact gets one decision';
          fail('conflicting_decision', new Error(decision.reason));
          continue;
        }
        decided.add(d.fact);
        if (d.event === 'NONE') {
          decision.reason = 'already known';
          if (d.id !== undefined && known[d.id]) decision.key = known[d.id]!.key;
          continue;
        }
        if (d.event === 'ADD') {
          const content = contentSchema.safeParse(fact.content);
          if (!content.success) {
            decision.reason = 'not storable';
            fail('invalid_content', content.error);
            continue;
          }
          decision.content = fact.content;
          changes.push({
            decision,
            change: {
              op: 'add',
              content: fact.content,
              tags: ['extracted', ...fact.tags],
              metadata: { source: 'extraction', ...(source ?? {}) },
              ...quoteOf(fact),
              ...validTimeOf(fact),
            },
          });
          continue;
        }
        const target = d.id === undefined ? undefined : known[d.id];
        if (!target) {
          decision.reason = `unknown memory id ${d.id ?? '(none)'}`;
          fail('unknown_id', new Error(decision.reason));
          continue;
        }
        decision.key = target.key;
        decision.previousContent = target.content;
        if (touched.has(d.id!)) {
          decision.reason = 'a memory gets one decision';
          fail('conflicting_decision', new Error(decision.reason));
          continue;
        }
        touched.add(d.id!);
        if (d.event === 'INVALIDATE') {
          changes.push({ decision, change: { op: 'invalidate', key: target.key } });
          continue;
        }
        const content = contentSchema.safeParse(d.content ?? fact.content);
        if (!content.success) {
          decision.reason = 'not storable';
          fail('invalid_content', content.error);
          continue;
        }
        decision.content = content.data;
        changes.push({
          decision,
          change: { op: 'update', key: target.key, content: content.data, tags: fact.tags, ...quoteOf(fact), ...updatedValidTime(target, fact) },
        });
      }
      // A fact the model gave no decision for is reported as such, not silently lost.
      facts.forEach((f, i) => {
        if (!decided.has(i)) decisions.push({ event: 'NONE', fact: f.content, status: 'skipped', reason: 'the model gave no decision' });
      });

      if (changes.length > 0) {
        await request.beforeApply?.();
        const applied: AppliedChange[] = await memories.applyChanges(
          request.scope,
          changes.map((c) => c.change),
          { type: 'extraction', ...(source ?? {}) },
        );
        applied.forEach((result, i) => {
          const { decision } = changes[i]!;
          decision.status = result.status;
          if (result.key) decision.key = result.key;
          if (result.reason) decision.reason = result.reason;
        });
      }
      return finish(decisions, 'ok');
    },
  };
}

const validTimeOf = ({ validFrom, validUntil }: ValidTime): ValidTime => ({
  ...(validFrom ? { validFrom } : {}),
  ...(validUntil ? { validUntil } : {}),
});

/**
 * The bounds the fact names, over the memory's own. When they would end it before it began (it
 * held from 2020, the fact says until 2019), the fact's bounds replace both of the memory's.
 */
function updatedValidTime(memory: { validFrom: Date | null; validUntil: Date | null }, fact: ValidTime): ValidTime {
  const named = validTimeOf(fact);
  const from = named.validFrom ?? memory.validFrom;
  const until = named.validUntil ?? memory.validUntil;
  if (from && until && until.getTime() <= from.getTime()) return { validFrom: named.validFrom ?? null, validUntil: named.validUntil ?? null };
  return named;
}
