import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync('README.md', 'utf8');

/** Where `needle` first stands in the README, failing by name when it is absent. */
function at(needle: string): number {
  const index = readme.indexOf(needle);
  expect(index, needle).toBeGreaterThanOrEqual(0);
  return index;
}

describe("the README's tour, run in order", () => {
  it("erases alice's memories only after the examples that answer from them", () => {
    const erasures = [at("DELETE 'localhost:3000/v1/memories?tagsAny=preferences&userId=alice'"), at('DELETE localhost:3000/v1/users/alice')];
    const answersFromThem = [
      at("user: 'alice', messages: [{ role: 'user', content: 'What do I drink?' }]"),
      at("curl -s 'localhost:3000/v1/memories/tea?userId=alice'"),
    ];
    expect(Math.min(...erasures)).toBeGreaterThan(Math.max(...answersFromThem));
  });

  it('saves the memory the OpenAI example answers from before it', () => {
    expect(at('"key":"tea","content":"Alice prefers green tea')).toBeLessThan(at("content: 'What do I drink?'"));
  });

  it('links docs/ARCHITECTURE.md before its first section, for those who come to change the code', () => {
    expect(at('(docs/ARCHITECTURE.md)')).toBeLessThan(at('\n## '));
  });
});
