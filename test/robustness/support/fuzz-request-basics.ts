import { RawJson, toJsonText } from './nasty-values.js';

// What every generated request is, and the encoding and labelling all the generators share.
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

export const BODYLESS = new Set(['GET', 'HEAD']);

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

export function clip(text: string, max = 160): string {
  const shown = JSON.stringify(text);
  return shown.length > max ? `${shown.slice(0, max)}…(${text.length} chars)` : shown;
}

export function describeValue(value: unknown): string {
  if (value instanceof RawJson) return `raw ${clip(value.text)}`;
  if (Array.isArray(value)) return value.length > 8 ? `array(${value.length})` : clip(toJsonText(value));
  return clip(toJsonText(value));
}

export function jsonOf(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
