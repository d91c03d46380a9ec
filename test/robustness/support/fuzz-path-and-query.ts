import fc from 'fast-check';
import { RAW_URL_FRAGMENTS, nastyQueryValue, nastyString, oddValidString } from './nasty-values.js';
import { percentEncode, clip } from './fuzz-request-basics.js';

// Broken path parameters and query strings.
const BAD_IDS = [
  'not-a-uuid',
  '123',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e999',
  '00000000-0000-0000-0000-00000000000g',
  '00000000-0000-4000-8000-0000000000000',
  '00000000000040008000000000000000',
  '{00000000-0000-4000-8000-000000000000}',
  ' 00000000-0000-4000-8000-000000000000',
  "00000000-0000-4000-8000-000000000000' OR '1'='1",
  '..',
  '.',
];

export type Segment = { text: string; encoded: string };

export const segment: fc.Arbitrary<Segment> = fc.oneof(
  fc.constantFrom(...BAD_IDS).map((text) => ({ text, encoded: percentEncode(text) })),
  fc.oneof(nastyString, oddValidString).map((text) => ({ text, encoded: percentEncode(text) })),
  fc.constantFrom(...RAW_URL_FRAGMENTS).map((raw) => ({ text: `raw ${raw}`, encoded: `x${raw}y` })),
  fc.constantFrom(300, 10_000).map((n) => ({ text: `x × ${n}`, encoded: 'x'.repeat(n) })),
);

// ---------------------------------------------------------------------------
// Query strings
// ---------------------------------------------------------------------------

type QueryStep =
  | { kind: 'set'; name: string; value: string }
  | { kind: 'add'; name: string; value: string }
  | { kind: 'repeat'; name: string; value: string }
  | { kind: 'bare'; name: string }
  | { kind: 'raw'; text: string };

const UNKNOWN_PARAMS = ['foo', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'tagsany', 'LIMIT', 'a[b]', 'a.b', 'tags', 'agent_id', ''];

export function queryStep(names: string[]): fc.Arbitrary<QueryStep> {
  const known = names.length > 0 ? names : ['agentId', 'limit', 'cursor', 'tagsAny'];
  return fc.oneof(
    fc.record({ kind: fc.constant('set' as const), name: fc.constantFrom(...known), value: nastyQueryValue }),
    fc.record({ kind: fc.constant('add' as const), name: fc.oneof(fc.constantFrom(...UNKNOWN_PARAMS), nastyString), value: nastyQueryValue }),
    fc.record({ kind: fc.constant('repeat' as const), name: fc.constantFrom(...known), value: nastyQueryValue }),
    fc.record({ kind: fc.constant('bare' as const), name: fc.constantFrom(...known, 'foo') }),
    fc.record({
      kind: fc.constant('raw' as const),
      text: fc.oneof(
        fc.constantFrom('&&&', '=', '=x', '&=&', '?', '#frag', 'a=1&&b=2', 'agentId=a&agentId=b', 'limit=1&limit=', 'x'.repeat(20_000)),
        fc.constantFrom(...RAW_URL_FRAGMENTS).map((f) => `agentId=${f}`),
        fc.constantFrom(...RAW_URL_FRAGMENTS).map((f) => `${f}=1`),
      ),
    }),
  );
}

export function applyQuery(base: [string, string][], steps: QueryStep[]): string {
  const parts = base.map(([n, v]) => ({ n, v }) as { n: string; v?: string; raw?: string });
  for (const step of steps) {
    if (step.kind === 'set') {
      const found = parts.find((p) => p.n === step.name);
      if (found) found.v = step.value;
      else parts.push({ n: step.name, v: step.value });
    } else if (step.kind === 'add' || step.kind === 'repeat') parts.push({ n: step.name, v: step.value });
    else if (step.kind === 'bare') parts.push({ n: step.name });
    else parts.push({ n: '', raw: step.text });
  }
  return parts.map((p) => p.raw ?? (p.v === undefined ? percentEncode(p.n) : `${percentEncode(p.n)}=${percentEncode(p.v)}`)).join('&');
}

export function describeQueryStep(step: QueryStep): string {
  switch (step.kind) {
    case 'set':
    case 'add':
    case 'repeat':
      return `query ${step.kind} ${clip(step.name, 40)}=${clip(step.value)}`;
    case 'bare':
      return `query bare ${step.name}`;
    case 'raw':
      return `query raw ${clip(step.text)}`;
  }
}
