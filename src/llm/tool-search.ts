import type { ToolSpec } from './messages.js';

/** The meta-tool's name: with many tools, it is what the model sees instead of all of them. */
export const TOOL_SEARCH_NAME = 'tool_search';

/** Tools a search returns (and promotes) at most. */
const TOOL_SEARCH_MAX_RESULTS = 5;

export const TOOL_SEARCH_SPEC: ToolSpec = {
  name: TOOL_SEARCH_NAME,
  description: 'Find tools by what they do. More tools exist than are listed; the ones this returns become callable for the rest of the turn.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', minLength: 1, maxLength: 500, description: 'What the tool should do, in a few words' } },
    required: ['query'],
    additionalProperties: false,
  },
};

// Glue words would match every description alike.
const GLUE = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'by',
  'can',
  'do',
  'for',
  'from',
  'how',
  'i',
  'in',
  'is',
  'it',
  'me',
  'my',
  'of',
  'on',
  'or',
  'that',
  'the',
  'this',
  'to',
  'tool',
  'what',
  'which',
  'with',
  'you',
  'your',
]);

const words = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && !GLUE.has(w));

/**
 * The tools whose names and descriptions share the most words with the query; a word in the
 * name counts double, since names are what tool authors choose most carefully. A tool scoring
 * under half the best is left out: one shared word of a long query is noise, and every tool
 * returned is one more the model is shown from then on. Ties keep the tools' order. Lexical on
 * purpose: it runs inside the agent loop, with no embedder at hand.
 */
export function searchTools(query: string, tools: readonly ToolSpec[], limit = TOOL_SEARCH_MAX_RESULTS): ToolSpec[] {
  const wanted = new Set(words(query));
  const scored = tools.map((tool, index) => {
    const name = new Set(words(tool.name));
    const description = new Set(words(tool.description));
    let score = 0;
    for (const word of wanted) score += (name.has(word) ? 2 : 0) + (description.has(word) ? 1 : 0);
    return { tool, index, score };
  });
  const best = Math.max(0, ...scored.map((s) => s.score));
  return scored
    .filter((s) => s.score > 0 && s.score * 2 >= best)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit)
    .map((s) => s.tool);
}
