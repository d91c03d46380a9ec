import { z } from 'zod';
import { decodeImageDataUrl, isHttpsUrl } from '../../llm/image-data.js';
import type { ImagePart } from '../../llm/messages.js';

/** How many images a message may carry and how large each may be (IMAGE_MAX_PER_MESSAGE, IMAGE_MAX_BYTES). */
export interface ImageLimits {
  maxBytes: number;
  maxPerMessage: number;
}

export const IMAGE_LIMITS_DEFAULT: ImageLimits = { maxBytes: 8 * 1_048_576, maxPerMessage: 8 };

const PARTS_MAX = 64;

const textPartSchema = z.strictObject({ type: z.literal('text'), text: z.string() });
const imagePartSchema = z.strictObject({
  type: z.literal('image_url'),
  image_url: z.strictObject({
    url: z.string().min(1),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  }),
});

export type TextPart = z.output<typeof textPartSchema>;
export type ImageUrlPart = z.output<typeof imagePartSchema>;
export type ContentPart = TextPart | ImageUrlPart;

/**
 * OpenAI's content parts: text, and images as https URLs or base64 data URLs whose bytes must be
 * PNG, JPEG, WebP or GIF. Each part is checked on its own, so that a refusal names the part's field
 * (`message.1.image_url.url`) rather than "invalid input" for the whole list.
 */
export function contentPartsSchema(limits: ImageLimits, textSchema: z.ZodType<string>, options: { requireText?: boolean } = {}) {
  const requireText = options.requireText ?? true;
  return z
    .array(z.looseObject({ type: z.string() }))
    .min(1)
    .max(PARTS_MAX)
    .superRefine((parts, ctx) => {
      let images = 0;
      parts.forEach((part, i) => {
        const schema = part.type === 'text' ? textPartSchema : part.type === 'image_url' ? imagePartSchema : undefined;
        if (!schema) {
          ctx.addIssue({ code: 'custom', path: [i, 'type'], message: `${JSON.stringify(part.type)} is not a part type this API reads: "text" or "image_url"` });
          return;
        }
        const checked = schema.safeParse(part);
        if (!checked.success) {
          for (const issue of checked.error.issues)
            ctx.addIssue({ code: 'custom', path: [i, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], message: issue.message });
          return;
        }
        if (checked.data.type !== 'image_url') return;
        images += 1;
        if (images > limits.maxPerMessage) {
          ctx.addIssue({ code: 'custom', path: [i], message: `a message may carry at most ${limits.maxPerMessage} images (IMAGE_MAX_PER_MESSAGE)` });
          return;
        }
        const problem = imageUrlProblem(checked.data.image_url.url, limits.maxBytes);
        if (problem) ctx.addIssue({ code: 'custom', path: [i, 'image_url', 'url'], message: problem });
      });
      // The text is what the turn is recalled, stored and indexed by: held to the text message's rules.
      const firstText = parts.findIndex((p) => p.type === 'text');
      const checked = textSchema.safeParse(splitContentParts(parts as ContentPart[]).text);
      if (firstText === -1) {
        if (requireText) ctx.addIssue({ code: 'custom', path: [], message: 'needs a text part: the question the images go with' });
      } else if (!checked.success) ctx.addIssue({ code: 'custom', path: [firstText, 'text'], message: checked.error.issues[0]!.message });
    })
    .meta({
      description:
        'OpenAI content parts: `{type: "text", text}` and `{type: "image_url", image_url: {url, detail?}}`, `url` an https URL ' +
        '(passed to the model, not fetched) or a `data:image/png|jpeg|webp|gif;base64,…` URL.',
    });
}

/** The parts' text (joined by blank lines: what recall, indexing and extraction read) and their images. */
export function splitContentParts(parts: readonly ContentPart[]): { text: string; images: ImagePart[] } {
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n\n');
  const images = parts.flatMap((p): ImagePart[] =>
    p.type === 'image_url' ? [{ url: p.image_url.url, ...(p.image_url.detail ? { detail: p.image_url.detail } : {}) }] : [],
  );
  return { text, images };
}

/** A checked message (text, or content parts) as the chat takes it: its text, and its images when it has any. */
export function textAndImagesOf(message: string | ReadonlyArray<{ type: string }>): { message: string; images?: ImagePart[] } {
  if (typeof message === 'string') return { message };
  const { text, images } = splitContentParts(message as ContentPart[]);
  return images.length > 0 ? { message: text, images } : { message: text };
}

/** Why an image part's URL cannot be sent (not https, not a data URL of an accepted image, too large); undefined when it can. */
export function imageUrlProblem(url: string, maxBytes: number): string | undefined {
  if (isHttpsUrl(url)) return undefined;
  const decoded = decodeImageDataUrl(url, maxBytes);
  return 'problem' in decoded ? decoded.problem : undefined;
}
