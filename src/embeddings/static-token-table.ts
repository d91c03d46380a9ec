import type { TokenTable } from './static-model-format.js';

const HEADER = 'id\tweight\tpiece';

/**
 * The token table as text: a header, then one `id<TAB>weight<TAB>piece` line a token. Tab-separated
 * rather than JSON, so that formatters leave the file (and its checksum) alone; no USE lite piece
 * holds a tab or a line break.
 */
export function formatTokenTable(table: TokenTable): string {
  const lines = table.ids.map((id, i) => `${id}\t${table.weights[i]}\t${table.pieces[i]}`);
  return `${[HEADER, ...lines].join('\n')}\n`;
}

/** Parses formatTokenTable's text; throws an Error naming the first bad line. */
export function parseTokenTable(text: string): TokenTable {
  const lines = text.split('\n');
  if (lines[0] !== HEADER) throw new Error(`does not start with the header "${HEADER.replace(/\t/g, '\\t')}"`);
  const table: TokenTable = { ids: [], pieces: [], weights: [] };
  for (let n = 1; n < lines.length; n++) {
    const line = lines[n]!;
    if (line === '' && n === lines.length - 1) break;
    const [id, weight, piece, ...rest] = line.split('\t');
    const parsedId = Number(id);
    const parsedWeight = Number(weight);
    if (rest.length > 0 || piece === undefined || !Number.isInteger(parsedId) || parsedId < 0 || !(parsedWeight >= 0) || !Number.isFinite(parsedWeight)) {
      throw new Error(`line ${n + 1} is not "id<TAB>weight<TAB>piece" with a non-negative integer id and weight`);
    }
    table.ids.push(parsedId);
    table.weights.push(parsedWeight);
    table.pieces.push(piece);
  }
  return table;
}
