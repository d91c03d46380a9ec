import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * A body of text the project may train on. Only the tuning parts of the shared data sets exist
 * under shared/datasets (SciFact train, SQuAD dev articles 13–48, LongMemEval_S's tuning part);
 * the held-out parts (LoCoMo, the other half of LongMemEval_S, SQuAD dev articles 1–12, SciFact's
 * test claims) are never read. WordNet's glosses come from the Debian package `wordnet-base`.
 */
export interface TrainingSource {
  name: string;
  /** Prose, one or more sentences a string; the caller splits it. */
  read(): Promise<string[]>;
}

export function defaultTrainingSources(datasets: string, wordnetDir = '/usr/share/wordnet'): TrainingSource[] {
  return [
    {
      name: 'scifact-train-claims',
      read: async () => jsonLines(await readFile(path.join(datasets, 'scifact/queries-train.jsonl'), 'utf8')).map((q) => String(q.text)),
    },
    {
      name: 'scifact-corpus',
      read: async () => jsonLines(await readFile(path.join(datasets, 'scifact/corpus.jsonl'), 'utf8')).flatMap((d) => [String(d.title), String(d.text)]),
    },
    {
      name: 'squad-dev-articles-13-48',
      read: async () => squadTexts(JSON.parse(await readFile(path.join(datasets, 'squad/squad-v1.1-dev-tuning.json'), 'utf8'))),
    },
    {
      name: 'longmemeval-s-tuning',
      read: async () => longMemEvalTexts(gunzipSync(await readFile(path.join(datasets, 'longmemeval-s/tuning.jsonl.gz'))).toString('utf8')),
    },
    { name: 'wordnet-glosses', read: async () => (existsSync(wordnetDir) ? wordnetGlosses(wordnetDir) : []) },
  ];
}

export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface Squad {
  data: { title: string; paragraphs: { context: string; qas: { question: string }[] }[] }[];
}

function squadTexts(squad: Squad): string[] {
  return squad.data.flatMap((article) => article.paragraphs.flatMap((p) => [p.context, ...p.qas.map((qa) => qa.question)]));
}

function longMemEvalTexts(text: string): string[] {
  const out: string[] = [];
  for (const question of jsonLines(text)) {
    for (const session of question.haystack_sessions as { content: string }[][]) for (const message of session) out.push(message.content);
  }
  return out;
}

/** The glosses of WordNet's data files: definitions and quoted examples, after each synset's `|`. */
async function wordnetGlosses(directory: string): Promise<string[]> {
  const out: string[] = [];
  for (const part of ['noun', 'verb', 'adj', 'adv']) {
    const file = path.join(directory, `data.${part}`);
    if (!existsSync(file)) continue;
    for (const line of (await readFile(file, 'utf8')).split('\n')) {
      if (line.startsWith('  ')) continue; // the licence header
      const bar = line.indexOf(' | ');
      if (bar < 0) continue;
      for (const piece of line.slice(bar + 3).split(/;\s*/)) {
        const gloss = piece.replace(/^"|"$/g, '').trim();
        if (gloss) out.push(gloss.charAt(0).toUpperCase() + gloss.slice(1));
      }
    }
  }
  return out;
}
