import fc from 'fast-check';
import type { BaseRequest } from './route-bases.js';
import { RAW_URL_FRAGMENTS, RawJson, deepNesting, nastyJson, nastyQueryValue, nastyString, oddValidString, toJsonText } from './nasty-values.js';

/** One generated request, ready for `app.request` or `fetch`. */
export interface FuzzRequest {
  method: string;
  /** Path and query string, already percent-encoded (or deliberately mis-encoded). */
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | FormData;
  /** The body as the server's JSON.parse will see it; absent when no body is sent. */
  json?: { ok: true; value: unknown } | { ok: false };
  /** A multipart upload, which the oracle does not judge. */
  multipart?: true;
  /** What was changed from the base request, for failure messages. */
  mutations: string[];
}

const BODYLESS = new Set(['GET', 'HEAD']);

/**
 * Percent-encodes like encodeURIComponent, except that a lone surrogate becomes its WTF-8 bytes
 * (`%ED%A0%80`) instead of a thrown URIError: what a sloppy client sends.
 */
export function percentEncode(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

function clip(text: string, max = 160): string {
  const shown = JSON.stringify(text);
  return shown.length > max ? `${shown.slice(0, max)}…(${text.length} chars)` : shown;
}

function describeValue(value: unknown): string {
  if (value instanceof RawJson) return `raw ${clip(value.text)}`;
  if (Array.isArray(value)) return value.length > 8 ? `array(${value.length})` : clip(toJsonText(value));
  return clip(toJsonText(value));
}

// ---------------------------------------------------------------------------
// Path parameters
// ---------------------------------------------------------------------------

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

type Segment = { text: string; encoded: string };

const segment: fc.Arbitrary<Segment> = fc.oneof(
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

function queryStep(names: string[]): fc.Arbitrary<QueryStep> {
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

function applyQuery(base: [string, string][], steps: QueryStep[]): string {
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

function describeQueryStep(step: QueryStep): string {
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

// ---------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------

/** Every path into the base body, to depth 4: fields, list items, nested objects. */
function pathsOf(value: unknown, prefix: (string | number)[] = [], depth = 0): (string | number)[][] {
  if (depth >= 4 || typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...pathsOf(v, [...prefix, k], depth + 1)]);
}

type BodyStep =
  | { kind: 'set'; path: (string | number)[]; value: unknown }
  | { kind: 'delete'; path: (string | number)[] }
  | { kind: 'add'; name: string; value: unknown };

function bodyStep(base: Record<string, unknown>): fc.Arbitrary<BodyStep> {
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

function applyBody(base: Record<string, unknown>, steps: BodyStep[]): Record<string, unknown> {
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

function describeBodyStep(step: BodyStep): string {
  if (step.kind === 'add') return `body add ${clip(step.name, 40)}=${describeValue(step.value)}`;
  if (step.kind === 'delete') return `body delete ${step.path.join('.')}`;
  return `body set ${step.path.join('.')}=${describeValue(step.value)}`;
}

interface RawBody {
  label: string;
  contentType?: string;
  body: string | Uint8Array;
}

/** Bodies no route takes: not JSON, JSON that is not an object, or not sent as anything readable. */
function rawBody(baseText: string): fc.Arbitrary<RawBody> {
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

function jsonOf(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

// ---------------------------------------------------------------------------
// Whole requests
// ---------------------------------------------------------------------------

const JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'APPLICATION/JSON', ''];

type BodyChoice = { kind: 'base' } | { kind: 'none' } | { kind: 'steps'; steps: BodyStep[]; contentType: string } | { kind: 'raw'; raw: RawBody };

/**
 * Requests to one route, each the base request with one to three parts broken: path
 * parameters, query string, body (field by field, or the whole of it).
 */
export function fuzzRequests(method: string, pattern: string, base: BaseRequest): fc.Arbitrary<FuzzRequest> {
  const paramNames = Object.keys(base.params);
  const params: fc.Arbitrary<Partial<Record<string, Segment>> | null> =
    paramNames.length === 0
      ? fc.constant(null)
      : fc.option(fc.record(Object.fromEntries(paramNames.map((n) => [n, segment])), { requiredKeys: [] }), { freq: 2 });
  const query = fc.option(fc.array(queryStep(base.query.map(([n]) => n)), { minLength: 1, maxLength: 3 }), { freq: 2 });
  const baseText = base.body ? JSON.stringify(base.body) : '{}';
  const bodies: fc.Arbitrary<BodyChoice>[] = [];
  if (!BODYLESS.has(method)) {
    bodies.push(rawBody(baseText).map((raw): BodyChoice => ({ kind: 'raw', raw })));
    if (base.body) {
      bodies.push(
        fc
          .record({ steps: fc.array(bodyStep(base.body), { minLength: 1, maxLength: 3 }), contentType: fc.constantFrom(...JSON_CONTENT_TYPES) })
          .map((b): BodyChoice => ({ kind: 'steps', ...b })),
        fc.constant<BodyChoice>({ kind: 'none' }),
      );
    }
  }
  const body: fc.Arbitrary<BodyChoice> =
    bodies.length === 0
      ? fc.constant({ kind: 'base' })
      : fc.oneof({ weight: 1, arbitrary: fc.constant<BodyChoice>({ kind: 'base' }) }, { weight: 4, arbitrary: fc.oneof(...bodies) });

  return fc
    .record({ params, query, body })
    .filter((r) => r.params !== null || r.query !== null || r.body.kind !== 'base')
    .map(({ params: p, query: q, body: b }) => {
      const mutations: string[] = [];
      const path = pattern.replace(/:(\w+)(\{[^}]*\})?\??/g, (_, name: string) => {
        const mutated = p?.[name];
        if (mutated) {
          mutations.push(`param ${name}=${clip(mutated.text)}`);
          return mutated.encoded;
        }
        return percentEncode(base.params[name] ?? 'x');
      });
      const qs = applyQuery(base.query, q ?? []);
      for (const step of q ?? []) mutations.push(describeQueryStep(step));
      const request: FuzzRequest = { method, url: qs ? `${path}?${qs}` : path, headers: {}, mutations };
      if (b.kind === 'base' && base.body && !BODYLESS.has(method)) {
        request.body = baseText;
        request.headers['content-type'] = 'application/json';
        request.json = jsonOf(baseText);
      } else if (b.kind === 'steps' && base.body) {
        const text = toJsonText(applyBody(base.body, b.steps));
        request.body = text;
        if (b.contentType) request.headers['content-type'] = b.contentType;
        request.json = jsonOf(text);
        mutations.push(...b.steps.map(describeBodyStep), ...(b.contentType === 'application/json' ? [] : [`content-type ${JSON.stringify(b.contentType)}`]));
      } else if (b.kind === 'raw') {
        request.body = b.raw.body;
        if (b.raw.contentType) request.headers['content-type'] = b.raw.contentType;
        const isJson = (b.raw.contentType ?? '').startsWith('application/json') && typeof b.raw.body === 'string';
        request.json = isJson ? jsonOf(b.raw.body as string) : { ok: false };
        mutations.push(`body ${b.raw.label}`);
      } else if (b.kind === 'none') {
        mutations.push('no body');
      }
      return Object.assign(request, { [fc.toStringMethod]: () => `${method} ${clip(request.url, 200)} [${mutations.join('; ')}]` });
    });
}

/** Paths to the base body's strings (fields and list items): where odd text can go. */
function stringPathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [prefix];
  if (typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => stringPathsOf(v, [...prefix, k]));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Requests with odd text that the schemas may well accept (RTL overrides, zero-width and astral
 * characters, SQL, combining marks) in the base request's strings: body fields, query values
 * and path parameters other than ids. These reach the stores, their SQL and their indexes.
 */
export function oddTextRequests(method: string, pattern: string, base: BaseRequest): fc.Arbitrary<FuzzRequest> | undefined {
  const bodyPaths = base.body && !BODYLESS.has(method) ? stringPathsOf(base.body) : [];
  const textParams = Object.keys(base.params).filter((n) => !UUID.test(base.params[n]!));
  const queryNames = base.query.map(([n]) => n);
  const slots = [
    ...bodyPaths.map((p) => ({ where: 'body' as const, path: p })),
    ...textParams.map((n) => ({ where: 'param' as const, path: [n] })),
    ...queryNames.map((n) => ({ where: 'query' as const, path: [n] })),
  ];
  if (slots.length === 0) return undefined;
  return fc.array(fc.tuple(fc.constantFrom(...slots), oddValidString), { minLength: 1, maxLength: 4 }).map((changes) => {
    const body = base.body ? (JSON.parse(JSON.stringify(base.body)) as Record<string, unknown>) : undefined;
    const params = { ...base.params };
    const query = base.query.map(([n, v]) => [n, v] as [string, string]);
    for (const [slot, text] of changes) {
      if (slot.where === 'param') params[slot.path[0] as string] = text;
      else if (slot.where === 'query') {
        for (const pair of query) if (pair[0] === slot.path[0]) pair[1] = text;
      } else if (body) {
        let parent: unknown = body;
        for (const key of slot.path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[key];
        (parent as Record<string | number, unknown>)[slot.path.at(-1)!] = text;
      }
    }
    const mutations = changes.map(([slot, text]) => `${slot.where} ${slot.path.join('.')}=${clip(text)}`);
    const path = pattern.replace(/:(\w+)(\{[^}]*\})?\??/g, (_, name: string) => percentEncode(params[name] ?? 'x'));
    const qs = query.map(([n, v]) => `${percentEncode(n)}=${percentEncode(v)}`).join('&');
    const request: FuzzRequest = { method, url: qs ? `${path}?${qs}` : path, headers: {}, mutations };
    if (body) {
      const text = JSON.stringify(body);
      Object.assign(request, { body: text, headers: { 'content-type': 'application/json' }, json: jsonOf(text) });
    }
    return Object.assign(request, { [fc.toStringMethod]: () => `${method} ${clip(request.url, 200)} [${mutations.join('; ')}]` });
  });
}

/** Lone surrogates as U+FFFD: what a UTF-8 encoder writes for them anyway, said outright. */
const wellFormed = (s: string) => s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

const FILE_TYPES = ['text/plain', 'text/markdown', 'text/html', 'application/pdf', 'application/octet-stream', 'image/png', ''];
const FILE_NAMES = [
  'a.txt',
  'notes.md',
  'page.html',
  'report.pdf',
  'noext',
  '.txt',
  '../../etc/passwd.txt',
  'a\u0000.txt',
  `${'x'.repeat(2_000)}.md`,
  'UPPER.TXT',
  '😀.html',
  '\u202Etxt.exe',
  ' .md',
  'a.txt\r\nX-Injected: 1',
];

const fileContent: fc.Arbitrary<{ label: string; bytes: Uint8Array }> = fc.oneof(
  // Mostly a file the parsers take, so that the rest of the request gets as far as the store.
  {
    weight: 4,
    arbitrary: oddValidString.map((s) => ({ label: `text ${clip(s)}`, bytes: new Uint8Array(Buffer.from(`Green tea. ${wellFormed(s)}`, 'utf8')) })),
  },
  fc.oneof(oddValidString, nastyString).map((s) => ({ label: `text ${clip(s)}`, bytes: new Uint8Array(Buffer.from(wellFormed(s), 'utf8')) })),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ label: `bytes(${bytes.length})`, bytes })),
  fc
    .constantFrom(
      '<p>a&#0;b &#xD800; &#x110000; &#xFFFE;</p>',
      '<html><head><title>t&#0;</title></head><body><script>x</script></body></html>',
      '<p></p>',
      '# \n\n---',
      '%PDF-1.4\n%garbage',
      '%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF',
      '\uFEFF# BOM heading\n\ntext',
    )
    .map((s) => ({ label: clip(s), bytes: new Uint8Array(Buffer.from(s, 'utf8')) })),
  fc.constant({ label: 'invalid UTF-8', bytes: new Uint8Array([0x61, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0xc0, 0xaf]) }),
  fc.constant({ label: 'UTF-16 with BOM', bytes: new Uint8Array([0xff, 0xfe, 0x61, 0x00, 0x00, 0xd8]) }),
);

/**
 * Multipart uploads for a route that takes them (its OpenAPI body lists multipart/form-data):
 * zero, one or two files with odd names, types and contents, and the form's fields with odd
 * values, repeated or unknown.
 */
export function multipartRequests(method: string, path: string, fieldNames: string[]): fc.Arbitrary<FuzzRequest> {
  const name = fc.oneof(
    fc.constantFrom(...FILE_NAMES),
    fc.tuple(fc.oneof(oddValidString, nastyString), fc.constantFrom('.txt', '.md', '.html', '')).map(([n, ext]) => n + ext),
  );
  type FileSpec = { name: string; type: string; content: { label: string; bytes: Uint8Array } };
  const file: fc.Arbitrary<FileSpec> = fc.record({ name, type: fc.constantFrom(...FILE_TYPES), content: fileContent });
  const names = [...fieldNames, 'file', 'extra'];
  const field = fc.tuple(fc.constantFrom(...names), fc.oneof(nastyQueryValue, fc.constantFrom('8', '16', '0', '["a","b"]', '[1]', '{"a":1}', '{', 'a,b,,c')));
  return fc
    .record({
      files: fc.oneof(
        { weight: 4, arbitrary: file.map((f): FileSpec[] => [f]) },
        { weight: 1, arbitrary: fc.constant<FileSpec[]>([]) },
        { weight: 1, arbitrary: fc.tuple(file, file).map(([a, b]): FileSpec[] => [a, b]) },
      ),
      fields: fc.oneof(fc.constant<[string, string][]>([]), fc.array(field, { minLength: 1, maxLength: 3 })),
    })
    .map(({ files, fields }) => {
      const form = new FormData();
      for (const f of files) form.append('file', new File([f.content.bytes], f.name, { type: f.type }));
      for (const [name, value] of fields) form.append(name, wellFormed(value));
      const mutations = [
        ...files.map((f) => `file ${clip(f.name, 60)} (${f.type || 'no type'}): ${f.content.label}`),
        ...fields.map(([n, v]) => `field ${n}=${clip(v)}`),
      ];
      const request: FuzzRequest = { method, url: path, headers: {}, body: form, multipart: true, mutations };
      return Object.assign(request, { [fc.toStringMethod]: () => `${method} ${path} multipart [${mutations.join('; ')}]` });
    });
}
