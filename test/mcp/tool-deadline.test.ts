import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/api/errors.js';
import { withDeadline } from '../../src/mcp/tool-deadline.js';
import { errorResult } from '../../src/mcp/tool-results.js';

describe('withDeadline', () => {
  it('fails with request_timeout at the deadline, and aborts the signal it gave the work', async () => {
    let given: AbortSignal | undefined;
    const never = withDeadline(20, undefined, (signal) => {
      given = signal;
      return new Promise(() => {});
    });
    await expect(never).rejects.toMatchObject({ status: 504, code: 'request_timeout' });
    expect(given?.aborted).toBe(true);
    expect(errorResult(await never.catch((err: unknown) => err))).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('request_timeout') }],
    });
  });

  it('passes the request signal through, and sets no deadline at 0 ms', async () => {
    const request = new AbortController();
    await withDeadline(10, request.signal, async (signal) => {
      request.abort(new Error('client gone'));
      expect(signal?.aborted).toBe(true);
    });
    expect(await withDeadline(0, request.signal, async (signal) => signal)).toBe(request.signal);
  });
});

describe('errorResult', () => {
  it("answers the API's error body, and hides an internal error's text", () => {
    const known = errorResult(new HttpError(404, 'not_found', 'No memory with key "k"'));
    expect(JSON.parse((known.content[0] as { text: string }).text)).toEqual({ error: { code: 'not_found', message: 'No memory with key "k"', details: null } });
    const seen: unknown[] = [];
    const internal = errorResult(new Error('password=hunter2 in a stack'), (err) => seen.push(err));
    expect((internal.content[0] as { text: string }).text).not.toContain('hunter2');
    expect(internal.isError).toBe(true);
    expect(seen).toHaveLength(1);
  });
});
