import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/util/group-commit.js';

/** A write that records its groups and stays open until `release` is called. */
function heldWrites() {
  const groups: number[][] = [];
  const releases: (() => void)[] = [];
  const write = async (items: readonly number[]) => {
    groups.push([...items]);
    await new Promise<void>((resolve) => releases.push(resolve));
    if (items.includes(-1)) throw new Error('bad item');
    return items.map((i) => i * 10);
  };
  const release = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    releases.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { groups, write, release };
}

describe('GroupCommit', () => {
  it('writes an item alone when nothing runs, and what arrives meanwhile together, up to the limit', async () => {
    const commits = new GroupCommit<number, number>(2);
    const { groups, write, release } = heldWrites();
    const results = [1, 2, 3, 4].map((i) => commits.run('k', i, write));
    await release();
    await release();
    await release();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40]);
    expect(groups).toEqual([[1], [2, 3], [4]]);
    expect(commits.size).toBe(0);
  });

  it('runs up to `writers` writes of a key at once, grouping what arrives while all are busy', async () => {
    const commits = new GroupCommit<number, number>(8, 2);
    const { groups, write, release } = heldWrites();
    const results = [1, 2, 3, 4, 5].map((i) => commits.run('k', i, write));
    await new Promise((resolve) => setImmediate(resolve));
    expect(groups).toEqual([[1], [2]]);
    for (let i = 0; i < 3; i++) await release();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50]);
    expect(groups).toEqual([[1], [2], [3, 4, 5]]);
    expect(commits.size).toBe(0);
  });

  it('keeps keys apart', async () => {
    const commits = new GroupCommit<number, number>(8);
    const { groups, write, release } = heldWrites();
    const results = [commits.run('a', 1, write), commits.run('b', 2, write)];
    await release();
    await release();
    expect(await Promise.all(results)).toEqual([10, 20]);
    expect(groups).toEqual([[1], [2]]);
  });

  it('fails only the bad item of a group: the group is written again item by item', async () => {
    const commits = new GroupCommit<number, number>(8);
    const { groups, write, release } = heldWrites();
    const settling = Promise.allSettled([1, 2, -1, 3].map((i) => commits.run('k', i, write)));
    for (let i = 0; i < 5; i++) await release();
    const settled = await settling;
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : 'failed'))).toEqual([10, 20, 'failed', 30]);
    expect(groups).toEqual([[1], [2, -1, 3], [2], [-1], [3]]);
  });
});
