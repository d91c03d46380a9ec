import { describe, expect, it } from 'vitest';
import { answerTypeOf, hasAnswerOfType } from '../../../src/chat/extractive/answer-type.js';
import { NOTHING_FOUND_ANSWER, NOT_ANSWERED_ANSWER, extractiveAnswer, queryTerms } from '../../../src/chat/extractive/extractive-answer.js';
import type { KnowledgeHit } from '../../../src/retrieval/knowledge.js';
import { SourceList } from '../../../src/chat/sources.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';

const now = new Date(0);
function memories(...contents: string[]) {
  const list = new SourceList();
  contents.forEach((content, i) =>
    list.addMemory({
      memory: {
        key: `m${i + 1}`,
        content,
        tags: [],
        metadata: {},
        agentId: 'a',
        userId: null,
        sources: [],
        validFrom: null,
        validUntil: null,
        validTo: null,
        expiresAt: null,
        status: 'active',
        quarantineReasons: [],
        createdAt: now,
        updatedAt: now,
      },
      score: 1 - i / 10,
    }),
  );
  return list.all();
}

/** Words of one meaning share a dimension: a tiny stand-in for a semantic model. */
const CONCEPTS: Record<string, number> = { store: 0, keep: 0, storage: 0, dry: 0, tea: 1, tin: 2, china: 3, grown: 4, iced: 5, hot: 5 };
const conceptEmbedder = {
  async embed(texts: string[]) {
    return texts.map((text) => {
      const v = new Array<number>(8).fill(0);
      for (const w of text.toLowerCase().match(/\p{L}+/gu) ?? []) if (CONCEPTS[w] !== undefined) v[CONCEPTS[w]!]! += 1;
      v[7] = 0.1;
      return v;
    });
  },
};

describe('queryTerms', () => {
  it('drops question words and glue, folds accents and stems', () => {
    expect([...queryTerms('What does Alice drink?')]).toEqual(['alic', 'drink']);
    expect(queryTerms('drinks')).toEqual(queryTerms('drinking'));
    expect(queryTerms('In which year was the café named?')).toEqual(queryTerms('cafe'));
  });

  it('matches irregular forms the stemmer leaves apart', () => {
    expect(queryTerms('kept')).toEqual(queryTerms('keep'));
    expect(queryTerms('began')).toEqual(queryTerms('beginning'));
    expect(queryTerms('children')).toEqual(queryTerms('child'));
    // "found" is also to found a city: not read as "find".
    expect(queryTerms('found')).not.toEqual(queryTerms('find'));
  });
});

describe('answer types', () => {
  it('reads what kind of answer a question wants', () => {
    expect(answerTypeOf('When did it open?')).toBe('date');
    expect(answerTypeOf('In what year did it open?')).toBe('date');
    expect(answerTypeOf('How many people live there?')).toBe('number');
    expect(answerTypeOf('Who designed it?')).toBe('name');
    expect(answerTypeOf('What colour is the sky?')).toBe('other');
  });
  it('finds a value of that kind the question does not already name', () => {
    expect(hasAnswerOfType('date', 'The bridge opened in 1932.', 'When did the bridge open?')).toBe(true);
    expect(hasAnswerOfType('date', 'The 1932 bridge is long.', 'When did the 1932 bridge open?')).toBe(false);
    expect(hasAnswerOfType('number', 'About 4,000 people live there.', 'How many people live there?')).toBe(true);
    expect(hasAnswerOfType('name', 'It was designed by John Bradfield.', 'Who designed the Harbour Bridge?')).toBe(true);
    expect(hasAnswerOfType('name', 'The Harbour Bridge is long.', 'Who designed the Harbour Bridge?')).toBe(false);
  });
  it('prefers the sentence holding the kind of answer asked for', async () => {
    const sources = memories('The tower was painted red again.', 'The tower was painted in 1954.');
    const { answer } = await extractiveAnswer('When was the tower painted?', sources, { maxSentences: 1 });
    expect(answer).toBe('The tower was painted in 1954. [1]');
  });
});

describe('extractiveAnswer', () => {
  it('finds the sentence that answers, though it shares a single word with the question', async () => {
    const sources = memories('Green tea is grown in China.', 'Keep tea in a dry tin.', 'Tea can be drunk hot or iced.');
    const { answer, citedIds } = await extractiveAnswer('How should I store tea?', sources, { embedder: conceptEmbedder, maxSentences: 1 });
    expect(answer).toBe('Keep tea in a dry tin. [1]');
    expect(citedIds).toEqual([2]);
    // Words alone cannot tell: the best-recalled memory wins.
    expect((await extractiveAnswer('How should I store tea?', sources, { maxSentences: 1 })).citedIds).toEqual([1]);
  });

  it('weighs rare shared words above common ones', async () => {
    const sources = memories(
      'Alice prefers green tea. She dislikes coffee.',
      'Bob rides his bike to work.',
      'Alice drinks green tea every afternoon in the garden.',
    );
    const { answer } = await extractiveAnswer('What does Alice drink in the afternoon?', sources, { maxSentences: 1 });
    expect(answer).toBe('Alice drinks green tea every afternoon in the garden. [1]');
  });

  it('works with an embedder that knows no meaning', async () => {
    const sources = memories('Alice prefers green tea.', 'Bob rides his bike to work.');
    const { answer } = await extractiveAnswer('Which bike does Bob ride to work?', sources, { embedder: createHashEmbedder(), maxSentences: 1 });
    expect(answer).toBe('Bob rides his bike to work. [1]');
  });

  it('answers from words alone when the embedder fails', async () => {
    const failing = { embed: () => Promise.reject(new Error('model gone')) };
    const sources = memories('Alice prefers green tea.', 'Bob rides his bike to work.');
    const { answer } = await extractiveAnswer('Which bike does Bob ride to work?', sources, { embedder: failing, maxSentences: 1 });
    expect(answer).toBe('Bob rides his bike to work. [1]');
  });

  it('declines when nothing answers, naming the closest sources', async () => {
    const sources = memories('Alice prefers green tea.', 'Bob rides his bike to work.');
    const reply = await extractiveAnswer('Who won the 1998 football world cup final?', sources, { embedder: createHashEmbedder() });
    expect(reply.declined).toBe(true);
    expect(reply.answer.startsWith(NOT_ANSWERED_ANSWER)).toBe(true);
    expect(reply.answer).toContain('the memory "m1" [1]');
    expect(reply.citedIds.length).toBeGreaterThan(0);
    expect((await extractiveAnswer('anything', [])).answer).toBe(NOTHING_FOUND_ANSWER);
  });

  it('limits the number of sentences and leaves weak ones out', async () => {
    const sources = memories('Alice prefers green tea.', 'Bob rides his bike to work.', 'Alice drinks green tea every afternoon.');
    const { citedIds } = await extractiveAnswer('Alice green tea', sources, { maxSentences: 1 });
    expect(citedIds).toHaveLength(1);
    const { answer } = await extractiveAnswer('Does Alice like green tea?', sources);
    expect(answer).not.toContain('Bob');
  });

  it('quotes a sentence that got no vector when words alone would (two embedded dropped the third sentence)', async () => {
    const sources = memories('Alice drinks green tea every afternoon.', 'Bob rides his bike to work.', 'Alice grows green tea in her garden.');
    const question = 'What tea does Alice drink in the afternoon?';
    const withoutVectors = await extractiveAnswer(question, sources, { maxSentences: 2 });
    expect(withoutVectors.answer).toContain('Alice grows green tea in her garden. [');
    expect(withoutVectors.citedIds).toContain(3);
    const { answer, citedIds } = await extractiveAnswer(question, sources, { embedder: createHashEmbedder(), embedded: 1, maxSentences: 2 });
    expect(answer).toBe('Alice drinks green tea every afternoon. [1] Alice grows green tea in her garden. [2]');
    expect(citedIds).toEqual([1, 3]);
  });

  it('quotes whole passages with their offsets in the document, and a leaning sentence with the one before', async () => {
    const document = '# Tea\n\nTea came to Europe in 1610. It was first sold by Dutch traders in Amsterdam. Prices fell later.';
    const passageStart = document.indexOf('Tea came');
    const chunkStart = document.indexOf('Prices');
    const hit: KnowledgeHit = {
      documentId: 'd',
      title: 'Tea',
      chunkId: 'c',
      headingPath: ['Tea'],
      start: chunkStart,
      end: document.length,
      text: document.slice(chunkStart),
      score: 1,
      passage: { start: passageStart, text: document.slice(passageStart), sections: [{ start: 0, headingPath: ['Tea'] }] },
    };
    const list = new SourceList();
    list.addDocument(hit);
    const reply = await extractiveAnswer('Who sold it first in Amsterdam?', list.all(), { maxSentences: 1 });
    expect(reply.answer).toBe('Tea came to Europe in 1610. It was first sold by Dutch traders in Amsterdam. [1]');
    const quotes = reply.quotes.get(1)!;
    expect(quotes.map((q) => document.slice(q.start, q.end))).toEqual(['Tea came to Europe in 1610.', 'It was first sold by Dutch traders in Amsterdam.']);
  });

  it('never quotes a Markdown heading line (the console answered "## Priming" to how to prime a pump)', async () => {
    const document =
      '# Pumps\n## Priming\nPrime the centrifugal pump with water before starting it. Close the discharge valve first.\n## Storage\nDrain the pump before winter.';
    const hit: KnowledgeHit = {
      documentId: 'd',
      title: 'pump-guide',
      chunkId: 'c',
      headingPath: ['Pumps', 'Priming'],
      start: 0,
      end: document.length,
      text: document,
      score: 1,
      passage: { start: 0, text: document, sections: [{ start: 0, headingPath: ['Pumps', 'Priming'] }] },
    };
    for (const embedder of [undefined, createHashEmbedder()]) {
      const list = new SourceList();
      list.addDocument(hit);
      const reply = await extractiveAnswer('How do I prime the centrifugal pump?', list.all(), { maxSentences: 3, ...(embedder ? { embedder } : {}) });
      expect(reply.answer).not.toContain('#');
      expect(reply.answer.startsWith('Prime the centrifugal pump with water before starting it.')).toBe(true);
      const quoted = reply.quotes.get(1)!.map((q) => document.slice(q.start, q.end));
      expect(quoted[0]).toBe('Prime the centrifugal pump with water before starting it.');
      expect(quoted.some((q) => q.includes('#'))).toBe(false);
    }
  });

  it('never quotes a heading line of a PDF as a sentence (it answered "…4.2 million euros [2] Revenue [2] Costs [2]")', async () => {
    const document =
      'Annual results\nRevenue\nRevenue rose to 4.2 million euros in 2025.\nCosts\nOperating costs of the revenue team\nCosts fell by 3 percent.';
    const hit: KnowledgeHit = {
      documentId: 'd',
      title: 'report.pdf',
      chunkId: 'c',
      headingPath: [],
      start: 0,
      end: document.length,
      text: document,
      score: 1,
      passage: { start: 0, text: document, sections: [{ start: 0, headingPath: [] }] },
    };
    const list = new SourceList();
    list.addDocument(hit);
    const reply = await extractiveAnswer('What were the revenue and costs?', list.all(), { maxSentences: 3 });
    expect(reply.answer).toBe('Revenue rose to 4.2 million euros in 2025. [1] Costs fell by 3 percent. [1]');
  });

  it("numbers its citations from 1 in the order it quotes them, whatever the sources' ids", async () => {
    const sources = memories('Carol keeps bees on the roof.', 'Bob rides his bike to work.', 'Alice drinks green tea every afternoon.');
    const { answer, citedIds } = await extractiveAnswer('What does Alice drink, and does Bob ride his bike to work?', sources, { maxSentences: 2 });
    expect(answer).toBe('Bob rides his bike to work. [1] Alice drinks green tea every afternoon. [2]');
    expect(citedIds).toEqual([2, 3]);
  });

  it('quotes what the user said in past turns, never their questions nor the answers they got', async () => {
    const list = new SourceList();
    const turn = (n: number, question: string, answer: string, score: number) =>
      list.addTurn({
        conversationId: 'c',
        turn: n,
        question,
        answer,
        at: new Date('2026-05-12T09:00:00Z'),
        agentId: 'a',
        userId: null,
        score,
        ranks: { vector: 1, text: 1 },
      });
    turn(3, 'Remember that my locker code is 4512.', 'Noted: your locker code is 4512.', 0.3);
    turn(4, 'What is my locker code?', 'Your locker code is 4512.', 0.9);
    const { answer, citedIds } = await extractiveAnswer('What is my locker code?', list.all(), { maxSentences: 3 });
    expect(answer).toBe('Remember that my locker code is 4512. [1]');
    expect(citedIds).toEqual([1]);
  });
});

describe('a past answer recalled as a turn', () => {
  it('is never quoted: each answer quoted the one before it, and grew with every question', async () => {
    const list = new SourceList();
    list.addTurn({
      conversationId: '0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11',
      turn: 1,
      question: 'What tea does Alice like?',
      answer: 'Alice prefers green tea in the afternoon [1]. She buys it in Kyoto [2, 3].',
      at: now,
      agentId: 'a',
      userId: null,
      score: 1,
      ranks: { vector: 1, text: 1 },
    });
    const { answer, citedIds } = await extractiveAnswer('Which tea does Alice prefer, and where does she buy it?', list.all());
    expect(answer).toBe(`${NOT_ANSWERED_ANSWER} The closest sources: an earlier conversation [1].`);
    expect(citedIds).toEqual([1]);
  });

  it("quotes the user's own words without the citation markers they copied from an answer", async () => {
    const list = new SourceList();
    list.addTurn({
      conversationId: '0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11',
      turn: 1,
      question: 'Alice prefers green tea in the afternoon [1]. She buys it in Kyoto [2, 3].',
      answer: 'Noted.',
      at: now,
      agentId: 'a',
      userId: null,
      score: 1,
      ranks: { vector: 1, text: 1 },
    });
    const { answer } = await extractiveAnswer('Which tea does Alice prefer, and where does she buy it?', list.all());
    expect(answer).toBe('Alice prefers green tea in the afternoon. She buys it in Kyoto. [1]');
  });
  it('does not repeat a sentence it showed as the context of the one after it', async () => {
    const sources = memories('Alice prefers green tea in the afternoon. She buys it in Kyoto.');
    const { answer } = await extractiveAnswer('Which tea does Alice prefer, and where does she buy it?', sources);
    expect(answer.match(/Alice prefers green tea/g)).toHaveLength(1);
  });
});
