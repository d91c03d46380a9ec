import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call } from './http-test-context.js';
import { scriptedAgentApp } from './support/scripted-agent-app.js';

/**
 * A /v1/chat/completions turn pausing on a client tool stored the client's whole history in the
 * run's state, its images as base64 data URLs (tens of MB rewritten per pause). The state names
 * them by attachment now, and the resumed turn sends the model the same images.
 */

// A PNG's signature and header, padded to 300 KB: large enough that a copy in the state shows in its size.
const PNG_HEAD = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const BIG_PNG = Buffer.concat([PNG_HEAD, Buffer.alloc(300_000, 7)]);
const BIG_PNG_URL = `data:image/png;base64,${BIG_PNG.toString('base64')}`;
const CAMERA = { type: 'function', function: { name: 'take_photo', description: 'Takes a photo', parameters: { type: 'object', properties: {} } } };

type WireMessage = { role: string; content: unknown };

describeOnDrivers('paused completions runs stored whole base64 images', (driver) => {
  const { ctx, appWithLlm } = scriptedAgentApp(driver, { clear: false });

  it('keeps a history image by reference in the paused run, and sends it to the model again on resume', async () => {
    const made = await appWithLlm([reply.toolCalls([{ id: 'cam', name: 'take_photo', arguments: '{}' }]), reply.text('Same as before.')]);
    const messages: unknown[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Remember this picture' },
          { type: 'image_url', image_url: { url: BIG_PNG_URL, detail: 'low' } },
        ],
      },
      { role: 'assistant', content: 'Remembered.' },
      { role: 'user', content: 'Does the camera see the same?' },
    ];
    const paused = await call(made.app, 'POST', '/v1/chat/completions', { model: 'memrag', messages, tools: [CAMERA] });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.choices[0].finish_reason).toBe('tool_calls');
    const { runId } = paused.body.memrag as { runId: string };
    // The first call had the image.
    const firstUsers = (made.llm.requests[0]!.body.messages as WireMessage[]).filter((m) => m.role === 'user');
    expect(firstUsers[0]!.content).toContainEqual({ type: 'image_url', image_url: { url: BIG_PNG_URL, detail: 'low' } });

    const rows = await ctx().database.db.execute(sql`SELECT octet_length(state::text) AS size, state::text AS state FROM runs WHERE id = ${runId}`);
    const row = (rows as unknown as { rows: Array<{ size: number; state: string }> }).rows[0]!;
    expect(Number(row.size)).toBeLessThan(20_000);
    expect(row.state).not.toContain('base64');
    expect(row.state).not.toContain(BIG_PNG.toString('base64').slice(0, 200));
    const stored = await ctx().database.db.execute(sql`SELECT id FROM attachments WHERE byte_size = ${BIG_PNG.length}`);
    const attachmentId = (stored as unknown as { rows: Array<{ id: string }> }).rows[0]!.id;
    expect(row.state).toContain(attachmentId);

    messages.push(paused.body.choices[0].message, { role: 'tool', tool_call_id: 'cam', content: 'photo taken' });
    const done = await call(made.app, 'POST', '/v1/chat/completions', { model: 'memrag', messages, tools: [CAMERA] });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.choices[0].message.content).toBe('Same as before.');
    expect(done.body.memrag.runId).toBe(runId);
    const resumedUsers = (made.llm.requests[1]!.body.messages as WireMessage[]).filter((m) => m.role === 'user');
    expect(resumedUsers[0]!.content).toEqual([
      { type: 'text', text: 'Remember this picture' },
      { type: 'image_url', image_url: { url: BIG_PNG_URL, detail: 'low' } },
    ]);
  });
});
