import { writeFile } from 'node:fs/promises';
import { clientApiDocument } from './client/api-document.js';
import { CLIENT_TYPES_PATH, clientTypesSource } from './client/client-types.js';

// Run from the repository root (npm run client:generate). The drift test compares the same output.
const source = await clientTypesSource(await clientApiDocument());
await writeFile(CLIENT_TYPES_PATH, source);
console.log(`wrote ${CLIENT_TYPES_PATH} (${source.length} characters)`);
