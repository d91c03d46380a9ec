import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { type IdleCollected, exposedGc, startIdleCollection } from '../../src/util/idle-collection.js';

const MB = 1_048_576;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A scripted process: how busy its loop was each interval and how large its heap is; a collection leaves 60 MB. */
function scripted() {
  const state = { busy: 0.9, heap: 100 * MB, collected: [] as IdleCollected[] };
  const collection = startIdleCollection({
    intervalMs: 5,
    minGrowthBytes: 32 * MB,
    gc: () => {
      state.heap = 60 * MB;
    },
    heapBytes: () => state.heap,
    utilization: () => state.busy,
    onCollected: (c) => state.collected.push(c),
  });
  return { state, collection };
}

describe('idle collection', () => {
  it('collects once the loop goes quiet after the heap grew, and once per quiet spell', async () => {
    const { state, collection } = scripted();
    try {
      state.heap = 200 * MB;
      await sleep(30);
      expect(state.collected).toHaveLength(0);
      state.busy = 0.01;
      await sleep(30);
      expect(state.collected).toHaveLength(1);
      expect(state.collected[0]).toMatchObject({ heapBefore: 200 * MB, heapAfter: 60 * MB });
      // Still quiet, nothing grown since: no second pause.
      await sleep(30);
      expect(state.collected).toHaveLength(1);
    } finally {
      collection.stop();
    }
  });

  it('leaves a heap that grew by less than the threshold alone', async () => {
    const { state, collection } = scripted();
    try {
      state.busy = 0;
      state.heap = 120 * MB;
      await sleep(30);
      expect(state.collected).toHaveLength(0);
    } finally {
      collection.stop();
    }
  });

  it('measures growth from where V8 shrank the heap itself', async () => {
    const { state, collection } = scripted();
    try {
      // V8 collected under load (50 MB), then the heap grew 40 MB from there: 10 below where it started.
      state.heap = 50 * MB;
      await sleep(20);
      state.heap = 90 * MB;
      state.busy = 0;
      await sleep(30);
      expect(state.collected).toHaveLength(1);
    } finally {
      collection.stop();
    }
  });

  it('gives back the pages where a few objects outlived the burst, with the real collector', async () => {
    const gc = exposedGc();
    expect(gc).toBeTypeOf('function');
    // What earlier test files left (they share this thread) is collected first, so that only this burst counts.
    gc!();
    gc!();
    const heapAtStart = getHeapStatistics().total_heap_size;
    const collected: IdleCollected[] = [];
    // Quiet at under half busy: the case is the collector, not how quiet a loaded CI machine lets a thread be.
    const collection = startIdleCollection({ intervalMs: 200, quietUtilization: 0.5, minGrowthBytes: 16 * MB, onCollected: (c) => collected.push(c) });
    const survivors: object[] = [];
    try {
      let garbage: object[] | null = [];
      // One object in 50 lives on, spread over every page the burst filled.
      for (let i = 0; i < 1_000_000; i++) {
        const o = { i, s: `x${i}` };
        garbage.push(o);
        if (i % 50 === 0) survivors.push(o);
      }
      garbage = null;
      for (let waited = 0; collected.length === 0 && waited < 10_000; waited += 50) await sleep(50);
      expect(collected.length).toBeGreaterThan(0);
      const { heapBefore, heapAfter } = collected[0]!;
      expect(heapBefore - heapAtStart).toBeGreaterThan(40 * MB);
      // One collection alone kept two thirds of what the burst grew here, two about a quarter.
      expect(heapAfter - heapAtStart).toBeLessThan((heapBefore - heapAtStart) * 0.4);
      expect(survivors).toHaveLength(20_000);
    } finally {
      collection.stop();
    }
  });
});
