import fc from 'fast-check';
import { nastyQueryValue, nastyString, oddValidString } from './nasty-values.js';
import { type FuzzRequest, clip } from './fuzz-request-basics.js';

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
