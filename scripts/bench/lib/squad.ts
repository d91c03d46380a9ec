/**
 * SQuAD v1.1 for the extractive-answer bench and tuning: its paragraphs as documents tagged with
 * their article, a deterministic sample of its questions, and SQuAD's own answer matching.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
export const SQUAD_TUNING_FILE = resolve(repoRoot, process.env.SQUAD_FILE ?? '../shared/datasets/squad/squad-v1.1-dev-tuning.json');

export interface SquadParagraph {
  article: number;
  index: number;
  title: string;
  context: string;
}

export interface SquadQuestion {
  id: string;
  article: number;
  paragraph: number;
  question: string;
  answers: string[];
}

export interface Squad {
  titles: string[];
  paragraphs: SquadParagraph[];
  questions: SquadQuestion[];
}

interface SquadFile {
  data: { title: string; paragraphs: { context: string; qas: { id: string; question: string; answers: { text: string }[] }[] }[] }[];
}

export function loadSquad(file = SQUAD_TUNING_FILE): Squad {
  const data = (JSON.parse(readFileSync(file, 'utf8')) as SquadFile).data;
  const paragraphs: SquadParagraph[] = [];
  const questions: SquadQuestion[] = [];
  data.forEach((article, a) =>
    article.paragraphs.forEach((p, i) => {
      paragraphs.push({ article: a, index: i, title: article.title.replace(/_/g, ' '), context: p.context });
      for (const qa of p.qas) questions.push({ id: qa.id, article: a, paragraph: i, question: qa.question, answers: qa.answers.map((x) => x.text) });
    }),
  );
  return { titles: data.map((a) => a.title.replace(/_/g, ' ')), paragraphs, questions };
}

export const articleTag = (article: number) => `squad-article-${article}`;

/** The same `n` questions on every run: a seeded shuffle, so a subsample is spread over all articles. */
export function sampleQuestions(questions: readonly SquadQuestion[], n: number, seed = 20): SquadQuestion[] {
  const shuffled = [...questions];
  let state = seed >>> 0 || 1;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  return shuffled.slice(0, n);
}

/** Another article for a question, varying with `i`, never its own. */
export function otherArticle(article: number, articles: number, i: number): number {
  return (article + 1 + (i % (articles - 1))) % articles;
}

/** SQuAD's normalisation: lower case, no punctuation, no a/an/the, single spaces. */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function answers(text: string, gold: readonly string[]): boolean {
  const padded = ` ${normalizeAnswer(text)} `;
  return gold.some((g) => {
    const n = normalizeAnswer(g);
    return n !== '' && padded.includes(` ${n} `);
  });
}

export const percentile = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
