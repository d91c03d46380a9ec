import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { splitSentences } from './split-sentences.js';
import { jsonLines } from './training-sources.js';

/** Two texts that belong together: the first as a query would say it, the second as a store holds it. */
export type TextPair = readonly [string, string];

/**
 * A body of text the contrastive stage reads pairs from, made from text alone (no question or label
 * of any benchmark): the same tuning parts of shared/datasets the distillation reads, never a
 * held-out part. `random` picks the sentence a passage gives up, so the pairs follow the seed.
 */
export interface PairSource {
  name: string;
  read(random: () => number): Promise<TextPair[]>;
}

/** A passage of three or more sentences, one of them against the rest (the inverse cloze task): a sentence finds the passage it came from. */
export function sentenceAgainstRest(text: string, random: () => number, heading?: string): TextPair | undefined {
  const sentences = splitSentences(text);
  if (sentences.length < 3) return undefined;
  const k = Math.floor(random() * sentences.length);
  const rest = sentences.filter((_, i) => i !== k).join(' ');
  return [sentences[k]!, heading ? `${heading}. ${rest}` : rest];
}

export function defaultPairSources(datasets: string): PairSource[] {
  return [
    {
      name: 'longmemeval-s-tuning',
      read: async (random) => conversationPairs(gunzipSync(await readFile(path.join(datasets, 'longmemeval-s/tuning.jsonl.gz'))).toString('utf8'), random),
    },
    {
      name: 'scifact-corpus',
      read: async (random) =>
        jsonLines(await readFile(path.join(datasets, 'scifact/corpus.jsonl'), 'utf8')).flatMap((d) =>
          optional(sentenceAgainstRest(String(d.text), random, String(d.title))),
        ),
    },
    {
      name: 'squad-dev-articles-13-48',
      read: async (random) => {
        const squad = JSON.parse(await readFile(path.join(datasets, 'squad/squad-v1.1-dev-tuning.json'), 'utf8')) as {
          data: { paragraphs: { context: string }[] }[];
        };
        return squad.data.flatMap((article) => article.paragraphs.flatMap((p) => optional(sentenceAgainstRest(p.context, random))));
      },
    },
  ];
}

/**
 * Each distinct session of LongMemEval's haystacks once: a user's message against the reply it
 * got (what a later question about it and the turn that answers share), and one sentence of a
 * long message against the rest of it.
 */
export function conversationPairs(jsonl: string, random: () => number): TextPair[] {
  const pairs: TextPair[] = [];
  const seen = new Set<string>();
  for (const question of jsonLines(jsonl)) {
    const ids = question.haystack_session_ids as string[];
    (question.haystack_sessions as { role: string; content: string }[][]).forEach((session, s) => {
      if (seen.has(ids[s]!)) return;
      seen.add(ids[s]!);
      session.forEach((message, m) => {
        if (message.role !== 'user') return;
        const reply = session[m + 1];
        if (reply?.role === 'assistant' && message.content.length > 10 && reply.content.length > 20) pairs.push([message.content, reply.content]);
        const cloze = sentenceAgainstRest(message.content, random);
        if (cloze) pairs.push(cloze);
      });
    });
  }
  return pairs;
}

const optional = <T>(value: T | undefined): T[] => (value === undefined ? [] : [value]);
