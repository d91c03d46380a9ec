import { deflateSync } from 'node:zlib';

/**
 * A small but structurally valid PDF (exact xref offsets), one Helvetica text line per entry, as a
 * binary latin-1 string. `compress` writes the content streams with FlateDecode, as real producers do.
 */
export function minimalPdf(pages: string[][], options: { compress?: boolean } = {}): string {
  const objects: string[] = [];
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  pages.forEach((lines, i) => {
    const escapePdf = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
    const content = `BT /F1 12 Tf 72 720 Td 14 TL\n${lines.map((l) => `(${escapePdf(l)}) Tj T*`).join('\n')}\nET`;
    const stream = options.compress ? deflateSync(Buffer.from(content, 'latin1')).toString('latin1') : content;
    const filter = options.compress ? ' /Filter /FlateDecode' : '';
    objects[4 + 2 * i] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`;
    objects[5 + 2 * i] = `<< /Length ${stream.length}${filter} >>\nstream\n${stream}\nendstream`;
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let n = 1; n < objects.length; n++) {
    offsets[n] = out.length;
    out += `${n} 0 obj\n${objects[n]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let n = 1; n < objects.length; n++) out += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return out;
}

export const toBytes = (binary: string) => Uint8Array.from(Buffer.from(binary, 'latin1'));
