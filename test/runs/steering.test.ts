import { describe, expect, it } from 'vitest';
import { createRunSteering } from '../../src/runs/steering.js';

describe('run steering', () => {
  it('hands each message out once, in order', () => {
    const steering = createRunSteering(['kept from a pause']);
    expect(steering.steer('one')).toBe(true);
    expect(steering.drain()).toEqual(['kept from a pause', 'one']);
    expect(steering.drain()).toEqual([]);
  });

  it('stays open while messages wait when the turn would end, and refuses any once it closed', () => {
    const steering = createRunSteering();
    steering.steer('late');
    expect(steering.finish()).toBe(false);
    expect(steering.drain()).toEqual(['late']);
    expect(steering.finish()).toBe(true);
    expect(steering.steer('too late')).toBe(false);
    expect(steering.requestPause()).toBe(false);
    expect(steering.pauseRequested()).toBe(false);
  });

  it('gives back what was queued when it closes (a pause keeps it for the resume)', () => {
    const steering = createRunSteering();
    steering.steer('a');
    expect(steering.requestPause()).toBe(true);
    expect(steering.pauseRequested()).toBe(true);
    expect(steering.close()).toEqual(['a']);
    expect(steering.closed).toBe(true);
  });
});
