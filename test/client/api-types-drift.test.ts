import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { clientApiDocument } from '../../scripts/client/api-document.js';
import { CLIENT_TYPES_PATH, clientTypesSource } from '../../scripts/client/client-types.js';

describe('the committed typed client', () => {
  it('matches the OpenAPI document the routes declare (else run `npm run client:generate`)', async () => {
    const committed = await readFile(CLIENT_TYPES_PATH, 'utf8');
    const regenerated = await clientTypesSource(await clientApiDocument());
    // Compared by line first, so a failure names the first line that drifted rather than dumping 7,000 lines.
    const committedLines = committed.split('\n');
    const regeneratedLines = regenerated.split('\n');
    const firstDrift = regeneratedLines.findIndex((line, i) => line !== committedLines[i]);
    expect(firstDrift === -1 ? null : { line: firstDrift + 1, committed: committedLines[firstDrift], regenerated: regeneratedLines[firstDrift] }).toBeNull();
    expect(regenerated).toBe(committed);
  });
});
