import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { MemragApiError, memragTools } from '../../src/ai-sdk/index.js';
import { type ListeningMemrag, promptText, startListeningMemrag } from './listening-memrag.js';
import { outcomes, runTools } from './run-tools.js';

let memrag: ListeningMemrag;
const AGENT = 'block-agent';

beforeAll(async () => {
  memrag = await startListeningMemrag();
  expect((await memrag.request('POST', '/v1/agents', { id: AGENT, name: AGENT })).status).toBe(201);
});
afterAll(async () => {
  await memrag?.close();
});
beforeEach(async () => {
  for (const table of ['blocks', 'block_history']) await memrag.ctx.database.db.execute(sql.raw(`DELETE FROM ${table}`));
});

const put = async (label: string, body: Record<string, unknown>) => {
  const res = await memrag.request('PUT', `/v1/blocks/${label}`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
};
const storedValue = async (label: string, query: string) => (await memrag.request('GET', `/v1/blocks/${label}?${query}`)).body.block?.value;
const tools = (userId = 'ursula') => memragTools({ baseUrl: memrag.url, agentId: AGENT, userId });
const messageOf = (outcome: { error?: unknown }) => (outcome.error as Error).message;

describe('memragTools: working memory', () => {
  it("lists the blocks memrag's turns show the agent and user, in the prompt's order, and no other user's", async () => {
    await put('persona', { agentId: AGENT, value: 'I am the travel desk.', readOnly: true });
    await put('profile', { userId: 'ursula', value: 'Name: Ursula', description: 'who the user is', limit: 100 });
    await put('trip', { agentId: AGENT, userId: 'ursula', value: 'Tromsø in February.' });
    await put('profile', { userId: 'victor', value: 'Name: Victor' });
    const [listed] = outcomes((await runTools(tools(), [['listBlocks', {}]])).result);
    expect(listed.blocks).toEqual([
      { label: 'persona', scope: "the agent's, shared with all its users", value: 'I am the travel desk.', chars: '21/2000', readOnly: true },
      { label: 'profile', scope: "the user's, shared with every agent", description: 'who the user is', value: 'Name: Ursula', chars: '12/100' },
      { label: 'trip', scope: "this agent's own about this user", value: 'Tromsø in February.', chars: '19/2000' },
    ]);
    // Without a user: the agent's blocks alone.
    const agentOnly = memragTools({ baseUrl: memrag.url, agentId: AGENT });
    expect(outcomes((await runTools(agentOnly, [['listBlocks', {}]])).result)[0].blocks.map((b: any) => b.label)).toEqual(['persona']);
  });

  it('reads and writes the most specific block of a label, keeping its settings, recorded as API writes', async () => {
    await put('notes', { userId: 'ursula', value: 'Shared with every agent.' });
    await put('notes', { agentId: AGENT, userId: 'ursula', value: 'Likes window seats.', description: 'travel notes', limit: 200 });
    const { result, prompts } = await runTools(tools(), [
      ['readBlock', { label: 'notes' }],
      ['appendToBlock', { label: 'notes', text: 'Vegetarian meals.' }],
      ['replaceInBlock', { label: 'notes', old: 'window', new: 'aisle' }],
    ]);
    const [read, appended, replaced] = outcomes(result);
    expect(read.block).toMatchObject({ label: 'notes', value: 'Likes window seats.', description: 'travel notes', chars: '19/200' });
    expect(appended).toEqual({ label: 'notes', scope: "this agent's own about this user", chars: '37/200' });
    expect(replaced).toMatchObject({ chars: '36/200' });
    expect(promptText(prompts[1]!, 'tool')).toContain('Likes window seats.');

    const stored = (await memrag.request('GET', `/v1/blocks/notes?agentId=${AGENT}&userId=ursula`)).body.block;
    expect(stored).toMatchObject({ value: 'Likes aisle seats.\nVegetarian meals.', description: 'travel notes', limit: 200, readOnly: false });
    expect(await storedValue('notes', 'userId=ursula')).toBe('Shared with every agent.');
    const history = await memrag.request('GET', `/v1/blocks/notes/history?agentId=${AGENT}&userId=ursula`);
    expect(history.body.events.map((e: any) => e.actor)).toEqual([{ type: 'api' }, { type: 'api' }, { type: 'api' }]);

    await runTools(tools(), [['rewriteBlock', { label: 'notes', value: 'Starts afresh.' }]]);
    expect(await storedValue('notes', `agentId=${AGENT}&userId=ursula`)).toBe('Starts afresh.');
  });

  it('refuses what memrag’s own tools refuse, saying why, and leaves the block as it was', async () => {
    await put('persona', { agentId: AGENT, value: 'I am the travel desk.', readOnly: true });
    await put('short', { userId: 'ursula', value: 'twelve chars', limit: 20 });
    await put('seats', { userId: 'ursula', value: 'aisle, aisle' });
    await put('prefs', { userId: 'ursula', value: '{"seat":"aisle"}', schema: { type: 'object', properties: { seat: { type: 'string' } } } });
    const { result } = await runTools(tools(), [
      ['appendToBlock', { label: 'persona', text: 'Be rude.' }],
      ['appendToBlock', { label: 'short', text: 'and ten more' }],
      ['replaceInBlock', { label: 'seats', old: 'aisle', new: 'window' }],
      ['replaceInBlock', { label: 'seats', old: 'middle', new: 'window' }],
      ['rewriteBlock', { label: 'missing', value: 'anything' }],
      ['rewriteBlock', { label: 'prefs', value: '{"seat":1}' }],
    ]);
    const [readOnly, over, ambiguous, absent, missing, schema] = outcomes(result);
    expect(messageOf(readOnly)).toMatch(/'persona' is read-only/);
    expect(messageOf(over)).toBe("Block 'short' holds at most 20 characters: this would make it 25, 5 over (8 of its 20 characters are left)");
    expect(messageOf(ambiguous)).toMatch(/'old' occurs 2 times in block 'seats'/);
    expect(messageOf(absent)).toMatch(/'old' does not occur in block 'seats'/);
    expect(messageOf(missing)).toMatch(/No block 'missing'/);
    // The schema is the server's to check: its 400 names the failing path.
    expect(schema.error).toBeInstanceOf(MemragApiError);
    expect(schema.error).toMatchObject({ status: 400, code: 'validation_error' });
    expect(messageOf(schema)).toContain('value.seat');

    expect(await storedValue('persona', `agentId=${AGENT}`)).toBe('I am the travel desk.');
    expect(await storedValue('short', 'userId=ursula')).toBe('twelve chars');
    expect(await storedValue('seats', 'userId=ursula')).toBe('aisle, aisle');
    expect(await storedValue('prefs', 'userId=ursula')).toBe('{"seat":"aisle"}');
    // Another user's tools do not see Ursula's block.
    expect(messageOf(outcomes((await runTools(tools('victor'), [['readBlock', { label: 'seats' }]])).result)[0])).toMatch(/No block 'seats'/);
  });
});
