import type { ImagePart } from '../llm/messages.js';

/** The message metadata key under which a stored message names its images. */
export const IMAGES_KEY = 'images';

/**
 * What a stored message keeps of its images: the attachment (id, hash, type) of an uploaded one,
 * the URL of an https one. A data URL never goes into a message row: an image not stored as an
 * attachment (the client's own history) is left out.
 */
export function imageRef(image: ImagePart): ImagePart | undefined {
  const detail = image.detail ? { detail: image.detail } : {};
  if (image.attachmentId)
    return {
      attachmentId: image.attachmentId,
      ...(image.sha256 ? { sha256: image.sha256 } : {}),
      ...(image.mediaType ? { mediaType: image.mediaType } : {}),
      ...detail,
    };
  if (image.url?.startsWith('https://')) return { url: image.url, ...detail };
  return undefined;
}

export function withImageRefs(metadata: Record<string, unknown>, images: readonly ImagePart[] | undefined): Record<string, unknown> {
  const refs = (images ?? []).flatMap((image) => imageRef(image) ?? []);
  return refs.length === 0 ? metadata : { ...metadata, [IMAGES_KEY]: refs };
}

/** The images a stored message names (an attachment's without its bytes: loaded only for the turns sent again). */
export function storedImagesOf(metadata: Record<string, unknown> | null | undefined): ImagePart[] | undefined {
  const refs = metadata?.[IMAGES_KEY];
  if (!Array.isArray(refs)) return undefined;
  const images = refs.flatMap((ref): ImagePart[] => {
    if (typeof ref !== 'object' || ref === null) return [];
    const r = ref as Record<string, unknown>;
    const detail: Pick<ImagePart, 'detail'> = r.detail === 'auto' || r.detail === 'low' || r.detail === 'high' ? { detail: r.detail } : {};
    if (typeof r.attachmentId === 'string') {
      return [
        {
          attachmentId: r.attachmentId,
          ...(typeof r.sha256 === 'string' ? { sha256: r.sha256 } : {}),
          ...(typeof r.mediaType === 'string' ? { mediaType: r.mediaType } : {}),
          ...detail,
        },
      ];
    }
    return typeof r.url === 'string' ? [{ url: r.url, ...detail }] : [];
  });
  return images.length > 0 ? images : undefined;
}

/** The attachment ids the messages' images name. */
export const attachmentIdsOf = (images: readonly ImagePart[] | undefined): string[] => (images ?? []).flatMap((i) => (i.attachmentId ? [i.attachmentId] : []));
