import { createHash } from 'node:crypto';

/** The image types a data URL may carry: what the vision models of OpenAI-compatible providers read. */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

export interface DecodedImage {
  mediaType: ImageMediaType;
  data: Buffer;
  sha256: string;
}

const DATA_URL = /^data:([a-z/+.-]+);base64,([A-Za-z0-9+/]*={0,2})$/;

/** The type the bytes are, by their magic numbers; undefined when none of the accepted ones. */
export function sniffImageType(bytes: Uint8Array): ImageMediaType | undefined {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'image/gif';
  // RIFF....WEBP
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp';
  return undefined;
}

/** The decoded size of a base64 payload, without decoding it. */
const decodedLength = (base64: string) => Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);

/**
 * A `data:image/…;base64,…` URL decoded, or why it cannot be taken: the declared type must be one
 * of IMAGE_MEDIA_TYPES, the bytes one of them (a renamed text file is not an image), and it must fit `maxBytes`.
 */
export function decodeImageDataUrl(url: string, maxBytes: number): DecodedImage | { problem: string } {
  const match = DATA_URL.exec(url);
  if (!match) return { problem: 'must be an https URL or a base64 data URL (data:image/png;base64,…)' };
  const declared = match[1]!;
  if (!(IMAGE_MEDIA_TYPES as readonly string[]).includes(declared))
    return { problem: `${declared} is not an accepted image type (${IMAGE_MEDIA_TYPES.join(', ')})` };
  // Checked before decoding, so an oversized upload is refused without its copy in memory.
  if (decodedLength(match[2]!) > maxBytes) return { problem: `the image is larger than ${maxBytes} bytes` };
  const data = Buffer.from(match[2]!, 'base64');
  const sniffed = sniffImageType(data);
  if (!sniffed) return { problem: 'is not an image: its bytes are not PNG, JPEG, WebP or GIF' };
  // A mislabelled image (a JPEG sent as image/png) is still one: it is kept as what its bytes are.
  return { mediaType: sniffed, data, sha256: createHash('sha256').update(data).digest('hex') };
}

export const toDataUrl = (mediaType: string, data: Uint8Array) => `data:${mediaType};base64,${Buffer.from(data).toString('base64')}`;

/** An https URL the model fetches itself (a reference: memrag does not fetch it). */
export function isHttpsUrl(url: string): boolean {
  if (!url.startsWith('https://')) return false;
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
}
