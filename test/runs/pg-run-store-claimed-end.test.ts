import { expect, it } from 'vitest';
import { describeOnDrivers } from '../support/database-drivers.js';
import { runningRuns } from './support/running-runs.js';

/** A run's end claimed before its turn is stored: it reads `running`, and nothing but its end moves it on. */
describeOnDrivers('run store: a claimed end', (driver) => {
  const { storeOf, start } = runningRuns(driver);
  const cancelled = { status: 'cancelled', error: { code: 'run_cancelled' }, state: null, expiresAt: null } as const;

  it('keeps a claimed run running, refuses it a cancel, and ends it only through endClaimed', async () => {
    const { runs, id } = await start();
    expect(await runs.claimEnd(id, 'completed')).toBe(true);
    expect(await runs.get(id)).toMatchObject({ status: 'running', stopReason: 'completed' });
    expect(await runs.statusOf(id)).toBe('running');
    // A cancel (from the status it read), a failure recorded by a caller that did not claim it: refused.
    expect(await runs.update(id, cancelled, ['running'])).toBe(false);
    expect(await runs.update(id, { status: 'failed', error: { code: 'turn_failed' } })).toBe(false);
    expect(await runs.claimEnd(id, 'max_iterations')).toBe(false);
    // Another tenant's store ends none of it.
    expect(await storeOf('beta').endClaimed(id, { status: 'completed' })).toBeNull();

    const ended = await runs.endClaimed(id, { status: 'completed', usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 }, threadKey: 'key-1' });
    // The run as its end left it, as a read after it finds it.
    expect(ended).toMatchObject({ id, status: 'completed', stopReason: 'completed', usage: { totalTokens: 5 } });
    expect(ended).toEqual(await runs.get(id));
    expect(await runs.endClaimed(id, { status: 'failed' })).toBeNull();
  });

  it('claims no end of a run cancelled first, and ends no run whose end is not claimed', async () => {
    const first = await start();
    expect(await first.runs.update(first.id, cancelled, ['running'])).toBe(true);
    expect(await first.runs.claimEnd(first.id, 'completed')).toBe(false);
    expect(await first.runs.get(first.id)).toMatchObject({ status: 'cancelled', stopReason: null });

    const second = await start();
    expect(await second.runs.endClaimed(second.id, { status: 'completed' })).toBeNull();
    expect(await second.runs.claimEnd(second.id, 'completed')).toBe(true);
    expect(await second.runs.endClaimed(second.id, { status: 'failed', error: { code: 'turn_failed' } })).toMatchObject({ status: 'failed' });
    expect(await second.runs.get(second.id)).toMatchObject({ status: 'failed', error: { code: 'turn_failed' } });
  });
});
