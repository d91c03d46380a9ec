import { z } from 'zod';
import { normalizeTag, tagSchema } from '../../retrieval/tags.js';
import { contentSchema } from '../memory-fields.js';
import type { ValidTime } from '../memory-types.js';
import { extractedValidTime } from './extracted-valid-time.js';
import { unescapeMarkup } from './extraction-prompts.js';

/** Bounds on what one extraction may write: a model that rambles does not fill the store. */
export const EXTRACTION_LIMITS = { maxFacts: 20, factMaxChars: 1_000, maxTagsPerFact: 3 } as const;

export interface ExtractedFact extends ValidTime {
  content: string;
  tags: string[];
  /** The user's words the model says the fact is drawn from: a claim, checked against the message before use. */
  quote?: string;
}

export type DecisionEvent = 'ADD' | 'UPDATE' | 'INVALIDATE' | 'NONE';

export interface ParsedDecision {
  fact: number;
  event: DecisionEvent;
  id?: number;
  content?: string;
}

/** A reply that is not the JSON asked for: the whole step is skipped. */
export class MalformedExtractionOutput extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedExtractionOutput';
  }
}

/** Models wrap JSON in fences or chatter despite being told not to: the outermost object is taken. */
function jsonObjectIn(reply: string): Record<string, unknown> {
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start === -1 || end <= start) throw new MalformedExtractionOutput('the reply holds no JSON object');
  let value: unknown;
  try {
    value = JSON.parse(reply.slice(start, end + 1));
  } catch (err) {
    throw new MalformedExtractionOutput(`the reply's JSON does not parse: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new MalformedExtractionOutput('the reply is not a JSON object');
  return value as Record<string, unknown>;
}

const factSchema = z.object({
  content: contentSchema.pipe(z.string().max(EXTRACTION_LIMITS.factMaxChars)),
  tags: z.array(z.unknown()).optional(),
  quote: z.unknown().optional(),
  validFrom: z.unknown().optional(),
  validUntil: z.unknown().optional(),
});

/**
 * The facts of the first request. Facts that are not storable are dropped one by one, tags
 * likewise; a quote that is not text, or a date that is not one, is dropped, not its fact.
 */
export function parseFacts(reply: string): { facts: ExtractedFact[]; dropped: number } {
  const value = jsonObjectIn(reply);
  if (!Array.isArray(value.facts)) throw new MalformedExtractionOutput('the reply has no "facts" array');
  const facts: ExtractedFact[] = [];
  let dropped = 0;
  for (const item of value.facts.slice(0, EXTRACTION_LIMITS.maxFacts)) {
    // A bare string is a fact without tags; small models answer that way.
    const parsed = factSchema.safeParse(typeof item === 'string' ? { content: item } : item);
    if (!parsed.success) {
      dropped += 1;
      continue;
    }
    const { content, quote, validFrom, validUntil } = parsed.data;
    const tags = (parsed.data.tags ?? []).flatMap((t) => (tagSchema.safeParse(t).success ? [normalizeTag(t as string)] : []));
    facts.push({
      content: content.trim(),
      tags: [...new Set(tags)].slice(0, EXTRACTION_LIMITS.maxTagsPerFact),
      ...(typeof quote === 'string' && quote.trim() !== '' ? { quote: unescapeMarkup(quote) } : {}),
      ...extractedValidTime(validFrom, validUntil),
    });
  }
  return { facts, dropped: dropped + Math.max(0, value.facts.length - EXTRACTION_LIMITS.maxFacts) };
}

const decisionSchema = z.object({
  fact: z.number().int().min(0),
  event: z.preprocess((e) => (typeof e === 'string' ? e.toUpperCase() : e), z.enum(['ADD', 'UPDATE', 'INVALIDATE', 'NONE'])),
  id: z.number().int().min(0).nullish(),
  content: z.string().nullish(),
});

/** The decisions of the second request; each malformed one is dropped on its own and counted. */
export function parseDecisions(reply: string): { decisions: ParsedDecision[]; malformed: number } {
  const value = jsonObjectIn(reply);
  if (!Array.isArray(value.decisions)) throw new MalformedExtractionOutput('the reply has no "decisions" array');
  const decisions: ParsedDecision[] = [];
  let malformed = 0;
  for (const item of value.decisions) {
    const parsed = decisionSchema.safeParse(item);
    if (!parsed.success) {
      malformed += 1;
      continue;
    }
    const { fact, event, id, content } = parsed.data;
    decisions.push({ fact, event, ...(id == null ? {} : { id }), ...(content == null ? {} : { content }) });
  }
  return { decisions, malformed };
}
