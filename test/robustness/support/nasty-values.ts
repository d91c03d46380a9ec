import fc from 'fast-check';

/** A JSON fragment sent as written: numbers JSON can spell but JavaScript cannot keep (1e999), or nesting too deep to build as an object. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of `value`, with RawJson fragments inlined; lone surrogates come out escaped (`"\ud800"`), as any client's JSON would. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Every length limit of the API (and one past the body limit), so that "one past" lands on each. */
export const LENGTH_LIMITS = [64, 128, 256, 512, 1000, 2048, 32_000, 100_000] as const;

const SQL_LIKE = [
  "'; DROP TABLE memories; --",
  "' OR '1'='1",
  '" OR ""="',
  '1; SELECT pg_sleep(10)--',
  '$$; DELETE FROM documents; $$',
  "E'\\x00'",
  "%' AND 1=1 --",
  "x' UNION SELECT NULL, version() --",
  "\\'; --",
  'memories.*',
  "'::regclass",
  'a & b | !c <-> d:*',
  "COPY memories TO PROGRAM 'id'",
];

/** Strings Postgres and JSON can store, but that are odd: the store and its indexes must take them as data. */
const ODD_VALID = [
  '\u202Eevil\u202C',
  '\u200B',
  'zero\u200Bwidth\u200Djoin\uFEFF',
  'e\u0301\u0301\u0301',
  '😀',
  '👩‍👩‍👧‍👦',
  '𝕏𝔂𝔷',
  '\u{10FFFF}',
  '\uFFFF\uFFFE',
  'ﬁ ℌ ① Ⅻ', // NFKC changes these
  'İı ß ẞ', // case folding changes lengths
  'עברית עם ‏סימן',
  '\u2028\u2029',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  '%00',
  '%s%n',
  '\\u0000',
  '   padded   ',
  ...SQL_LIKE,
];

/** Strings every text field must refuse with a 400: Postgres text cannot hold NUL, JSON text cannot hold a lone surrogate. */
const UNSTORABLE = ['\u0000', 'a\u0000b', '\uD800', 'x\uDBFF', '\uDC00y', '\uDFFF\uD800', 'ok😀\uD83D'];

const CONTROL = ['\u0007', '\u001B[31mred', '\r\n', '\t', '\u007F', '\u0085', '\b\f\v'];

const NASTY_UNITS = [...UNSTORABLE, ...CONTROL, ...ODD_VALID.slice(0, 14), 'a', ' ', "'", '"', '\\', '%', '/', ',', '.'];

export const oddValidString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...ODD_VALID),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).filter((s) => !s.includes('\u0000')),
  fc.string({ unit: fc.constantFrom(...ODD_VALID), minLength: 1, maxLength: 6 }),
);

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  oddValidString,
  fc.constantFrom(...UNSTORABLE, ...CONTROL, '', ' ', '\n\t '),
  fc.string({ unit: fc.constantFrom(...NASTY_UNITS), maxLength: 12 }),
  // One past each limit, in UTF-16 units and in astral characters (two units, one code point).
  fc.constantFrom(...LENGTH_LIMITS).map((n) => 'x'.repeat(n + 1)),
  fc.constantFrom(...LENGTH_LIMITS).map((n) => '😀'.repeat(Math.ceil((n + 1) / 2))),
);

export const nastyNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, -1, 0.5, 1.5, -2.5, 2 ** 31, 2 ** 53 + 2, 1e21, 1e308, -1e308, 5e-324, 10_001, 1_000_001),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  // JSON can write these; JavaScript reads Infinity, -0, or a rounded integer.
  fc.constantFrom('1e999', '-1e999', '-0', '123456789012345678901234567890', '1E-400', '0.1e1').map((t) => new RawJson(t)),
);

/** Nesting as JSON text: JSON.parse takes any depth, but code that recurses over it may not. */
export const deepNesting: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(33, 1_000, 100_000), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) => new RawJson(kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

export const hugeArray: fc.Arbitrary<unknown[]> = fc
  .tuple(fc.constantFrom(65, 129, 1_001, 50_000), fc.constantFrom('same', 'distinct', 'numbers', 'objects'))
  .map(([n, kind]) => Array.from({ length: n }, (_, i) => (kind === 'same' ? 't' : kind === 'distinct' ? `t${i}` : kind === 'numbers' ? i : { i })));

/** Any JSON value a hostile or broken client might put where a field goes. */
export const nastyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: nastyString },
  { weight: 2, arbitrary: nastyNumber },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': null }, ['ok', 7]) },
  { weight: 1, arbitrary: hugeArray },
  { weight: 1, arbitrary: deepNesting },
  { weight: 2, arbitrary: fc.array(nastyString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(nastyString, fc.oneof(nastyString, nastyNumber), { maxKeys: 3 }) },
);

/** Values for a query-string parameter, as text before percent-encoding. */
export const nastyQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'NaN',
    'nan',
    'Infinity',
    '-Infinity',
    '-1',
    '0',
    '1.5',
    '1e3',
    '0x10',
    '+5',
    ' 5',
    '5 ',
    '٣',
    '9'.repeat(400),
    'true',
    'null',
    '[]',
    '{}',
  ),
  nastyString,
);

/** Bytes of a query string or path segment that no encoder writes: invalid UTF-8, truncated or bogus escapes. */
export const RAW_URL_FRAGMENTS = ['%ED%A0%80', '%C0%AF', '%FF', '%E0%A4%A', '%', '%2', '%zz', '%00', '%2F', '%2e%2e', '%u0041', '%25', '+'];
