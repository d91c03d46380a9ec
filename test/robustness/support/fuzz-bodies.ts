import fc from 'fast-check';
import { RawJson, deepNesting, nastyJson, nastyString, oddValidString } from './nasty-values.js';
import { clip, describeValue } from './fuzz-request-basics.js';

// Broken JSON bodies: field by field, or the whole of it.
/** Every path into the base body, to depth 4: fields, list items, nested objects. */
function pathsOf(value: unknown, prefix: (string | number)[] = [], depth = 0): (string | number)[][] {
  if (depth >= 4 || typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...pathsOf(v, [...prefix, k], depth + 1)]);
}

export type BodyStep =
  | { kind: 'set'; path: (string | number)[]; value: unknown }
  | { kind: 'delete'; path: (string | number)[] }
  | { kind: 'add'; name: string; value: unknown };

export function bodyStep(base: Record<string, unknown>): fc.Arbitrary<BodyStep> {
  const paths = pathsOf(base);
  const steps: fc.Arbitrary<BodyStep>[] = [
    fc.record({
      kind: fc.constant('add' as const),
      name: fc.oneof(fc.constantFrom('extra', '__proto__', 'constructor', 'Content', ''), nastyString),
      value: nastyJson,
    }),
  ];
  if (paths.length > 0) {
    const path = fc.constantFrom(...paths);
    steps.push(
      fc.record({ kind: fc.constant('set' as const), path, value: fc.oneof({ weight: 3, arbitrary: nastyJson }, { weight: 1, arbitrary: oddValidString }) }),
      fc.record({ kind: fc.constant('delete' as const), path }),
    );
  }
  return fc.oneof(...steps);
}

export function applyBody(base: Record<string, unknown>, steps: BodyStep[]): Record<string, unknown> {
  // RawJson values are only ever added, never cloned: the base itself is plain JSON.
  const body = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  for (const step of steps) {
    if (step.kind === 'add') {
      Object.defineProperty(body, step.name, { value: step.value, enumerable: true, writable: true, configurable: true });
      continue;
    }
    let parent: unknown = body;
    for (const key of step.path.slice(0, -1)) parent = typeof parent === 'object' && parent !== null ? (parent as Record<string, unknown>)[key] : undefined;
    if (typeof parent !== 'object' || parent === null || parent instanceof RawJson) continue;
    const last = step.path.at(-1)!;
    const container = parent as Record<string | number, unknown>;
    if (step.kind === 'delete') {
      if (Array.isArray(container) && typeof last === 'number') container.splice(last, 1);
      else delete container[last];
    } else container[last] = step.value;
  }
  return body;
}

export function describeBodyStep(step: BodyStep): string {
  if (step.kind === 'add') return `body add ${clip(step.name, 40)}=${describeValue(step.value)}`;
  if (step.kind === 'delete') return `body delete ${step.path.join('.')}`;
  return `body set ${step.path.join('.')}=${describeValue(step.value)}`;
}

export interface RawBody {
  label: string;
  contentType?: string;
  body: string | Uint8Array;
}

/** Bodies no route takes: not JSON, JSON that is not an object, or not sent as anything readable. */
export function rawBody(baseText: string): fc.Arbitrary<RawBody> {
  const json = (label: string, body: string): RawBody => ({ label, contentType: 'application/json', body });
  return fc.oneof(
    fc
      .constantFrom(
        '{',
        '{"a":1,}',
        "{'a':1}",
        '{"a":1}{"b":2}',
        'NaN',
        'undefined',
        '{"a":undefined}',
        '\u0000',
        '[1,2',
        '\uFEFF{}',
        '{"a":"\u0001"}',
        '{"a":1e}',
        '{"__proto__":',
      )
      .map((t) => json(`malformed ${clip(t)}`, t)),
    fc.nat({ max: Math.max(0, baseText.length - 1) }).map((n) => json(`truncated at ${n}`, baseText.slice(0, n))),
    fc
      .string({ unit: 'binary', maxLength: 40 })
      .filter((s) => !parsesToObject(s))
      .map((s) => json(`garbage ${clip(s)}`, s)),
    fc.constantFrom('null', '42', '"text"', 'true', '[]', '[{}]', `[${baseText}]`, '', '   ').map((t) => json(`not an object ${clip(t)}`, t)),
    deepNesting.map((d) => json(`deep ${clip(d.text, 30)}`, d.text)),
    fc.constantFrom<RawBody>(
      { label: 'form-urlencoded', contentType: 'application/x-www-form-urlencoded', body: 'content=x&key=k&query=q' },
      {
        label: 'multipart without a file',
        contentType: 'multipart/form-data; boundary=XyZ',
        body: '--XyZ\r\nContent-Disposition: form-data; name="content"\r\n\r\nx\r\n--XyZ--\r\n',
      },
      { label: 'multipart without a boundary', contentType: 'multipart/form-data', body: 'garbage' },
      {
        label: 'multipart cut short',
        contentType: 'multipart/form-data; boundary=XyZ',
        body: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc',
      },
      { label: 'xml', contentType: 'text/xml', body: '<memory><content>x</content></memory>' },
      { label: 'binary', contentType: 'application/octet-stream', body: new Uint8Array([0xff, 0xfe, 0x00, 0x7b, 0x80, 0xc0]) },
      { label: 'utf-16 JSON', contentType: 'application/json; charset=utf-16le', body: new Uint8Array(Buffer.from(baseText, 'utf16le')) },
    ),
  );
}

function parsesToObject(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}
