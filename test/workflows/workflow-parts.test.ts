import { describe, expect, it } from 'vitest';
import { workflowDefinitionSchema } from '../../src/workflows/workflow-definition.js';
import { conditionHolds, nextNode } from '../../src/workflows/workflow-edges.js';
import { mergeState, renderTemplate } from '../../src/workflows/workflow-template.js';

describe('workflow templates', () => {
  const scope = { input: 'the input', outputs: new Map([['a', 'A said so']]), state: { topic: 'tea', n: 3, obj: { x: 1 } } };

  it('fills input, a node output and state keys, spaces inside the braces allowed', () => {
    expect(renderTemplate('{{input}} / {{ nodes.a.output }} / {{state.topic}} {{state.n}} {{state.obj}}', scope)).toBe('the input / A said so / tea 3 {"x":1}');
  });

  it('fills what is not there yet with nothing, and leaves other braces as written', () => {
    expect(renderTemplate('[{{nodes.b.output}}][{{state.none}}] {{other}}', scope)).toBe('[][] {{other}}');
  });

  it('merges an output that is a JSON object into the state, and ignores any other', () => {
    expect(mergeState({ a: 1 }, ' {"b": 2, "a": 3} ')).toEqual({ a: 3, b: 2 });
    expect(mergeState({ a: 1 }, '[1, 2]')).toEqual({ a: 1 });
    expect(mergeState({ a: 1 }, '{not json')).toEqual({ a: 1 });
    expect(mergeState({ a: 1 }, 'plain text')).toEqual({ a: 1 });
  });
});

describe('workflow edges', () => {
  const definition = {
    edges: [
      { from: 'a', to: 'exact', when: { outputEquals: 'yes' } },
      { from: 'a', to: 'pattern', when: { outputMatches: '^no\\b' } },
      { from: 'a', to: 'fallback' },
      { from: 'b', to: 'a', when: { outputEquals: 'never' } },
    ],
  };

  it('takes the first edge whose condition holds, in order', () => {
    expect(nextNode(definition, 'a', ' yes ')).toBe('exact');
    expect(nextNode(definition, 'a', 'no way')).toBe('pattern');
    expect(nextNode(definition, 'a', 'maybe')).toBe('fallback');
  });

  it('ends the run when no edge is taken', () => {
    expect(nextNode(definition, 'b', 'something')).toBeUndefined();
    expect(nextNode(definition, 'c', 'anything')).toBeUndefined();
  });

  it('holds an edge without a condition always', () => {
    expect(conditionHolds(undefined, '')).toBe(true);
  });
});

describe('workflow definitions', () => {
  const base = { name: 'n', entry: 'a', nodes: [{ id: 'a', agentId: 'x', prompt: 'p' }] };
  const pathsOf = (value: unknown) => {
    const parsed = workflowDefinitionSchema.safeParse(value);
    return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join('.'));
  };

  it('accepts a graph of one node without edges, edges defaulting to none', () => {
    expect(workflowDefinitionSchema.parse(base).edges).toEqual([]);
  });

  it('names each broken rule by its field', () => {
    expect(pathsOf({ ...base, nodes: [...base.nodes, { id: 'a', agentId: 'y', prompt: 'q' }] })).toEqual(['nodes.1.id']);
    expect(pathsOf({ ...base, entry: 'b' })).toEqual(['entry']);
    expect(pathsOf({ ...base, edges: [{ from: 'z', to: 'a' }] })).toEqual(['edges.0.from']);
    expect(pathsOf({ ...base, edges: [{ from: 'a', to: 'a', when: { outputMatches: '*' } }] })).toEqual(['edges.0.when.outputMatches']);
    expect(pathsOf({ ...base, edges: [{ from: 'a', to: 'a', when: { outputMatches: 'x', outputEquals: 'y' } }] })).toEqual(['edges.0.when']);
    expect(pathsOf({ ...base, maxSteps: 0 })).toEqual(['maxSteps']);
  });
});
