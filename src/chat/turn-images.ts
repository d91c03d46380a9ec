import type { AttachmentStore } from '../conversations/attachment-store.js';
import { imageRef } from '../conversations/image-refs.js';
import { decodeImageDataUrl } from '../llm/image-data.js';
import type { AgentHooks } from '../llm/agent-loop.js';
import type { ChatMessage, ImagePart } from '../llm/messages.js';

/**
 * A message's images made ready for its turn: each data URL's image stored (once per hash) before
 * the model runs, so that the stored turn and a paused run name it by id. The URLs stay on the
 * parts for this turn's model calls. Without a store (conversations not kept) they only travel.
 */
export async function storeTurnImages(
  images: readonly ImagePart[] | undefined,
  attachments: AttachmentStore | undefined,
  userId: string | null,
): Promise<ImagePart[]> {
  if (!images || images.length === 0) return [];
  if (!attachments) return [...images];
  const decoded = images.map((image) => {
    if (!image.url?.startsWith('data:')) return undefined;
    const result = decodeImageDataUrl(image.url, Number.POSITIVE_INFINITY);
    // Checked at the edge already: one that fails here was not validated (a programming error).
    if ('problem' in result) throw new TypeError(`an unchecked image reached the chat: ${result.problem}`);
    return result;
  });
  const stored = await attachments.put(
    decoded.flatMap((d) => d ?? []),
    userId,
  );
  let next = 0;
  return images.map((image, i) => {
    if (!decoded[i]) return image;
    const row = stored[next++]!;
    return { ...image, attachmentId: row.id, sha256: row.sha256, mediaType: row.mediaType };
  });
}

/** The references a paused run keeps: no image bytes in its state. */
export const imageRefs = (images: readonly ImagePart[]): ImagePart[] => images.flatMap((image) => imageRef(image) ?? []);

/** A paused run's images loaded again (an image erased meanwhile is left out). */
export async function loadTurnImages(refs: readonly ImagePart[] | undefined, attachments: AttachmentStore | undefined): Promise<ImagePart[]> {
  if (!refs || refs.length === 0) return [];
  const wanted = refs.flatMap((r) => (r.attachmentId && !r.url ? [r.attachmentId] : []));
  const urls = wanted.length > 0 && attachments ? await attachments.dataUrls(wanted) : new Map<string, string>();
  return refs.flatMap((r) => (r.url ? [r] : r.attachmentId && urls.has(r.attachmentId) ? [{ ...r, url: urls.get(r.attachmentId)! }] : []));
}

/**
 * A client's own history (`/v1/chat/completions` sends the whole thread, images as data URLs) as a
 * paused run keeps it: each data URL's image stored as an attachment and named by reference, so
 * the run's row holds no image bytes (rewritten with every pause otherwise). An image stored
 * already (a resumed run's history, loaded again) is named as it is. Without a store a data URL is
 * left out, as a stored message leaves it out.
 */
export async function storeHistoryImages(
  history: readonly ChatMessage[],
  attachments: AttachmentStore | undefined,
  userId: string | null,
): Promise<ChatMessage[]> {
  const stored: ChatMessage[] = [];
  for (const message of history) {
    if ((message.role !== 'user' && message.role !== 'tool') || !message.images?.length) {
      stored.push(message);
      continue;
    }
    const fresh = message.images.filter((image) => !image.attachmentId);
    const put = await storeTurnImages(fresh, attachments, userId);
    const byPart = new Map(fresh.map((image, i) => [image, put[i]!]));
    stored.push({ ...message, images: imageRefs(message.images.map((image) => byPart.get(image) ?? image)) });
  }
  return stored;
}

/** A paused run's history with its stored images loaded again, for the model (one read for all). */
export async function loadHistoryImages(
  history: readonly ChatMessage[] | undefined,
  attachments: AttachmentStore | undefined,
): Promise<ChatMessage[] | undefined> {
  if (!history) return undefined;
  const refs = history.flatMap((m) => (m.role === 'user' || m.role === 'tool' ? (m.images ?? []) : []));
  if (refs.length === 0) return [...history];
  const loaded = await loadTurnImages(refs, attachments);
  const byId = new Map(loaded.flatMap((image) => (image.attachmentId ? [[image.attachmentId, image] as const] : [])));
  return history.map((m) => {
    if ((m.role !== 'user' && m.role !== 'tool') || !m.images?.length) return m;
    const images = m.images.flatMap((image) =>
      image.url ? [image] : image.attachmentId && byId.has(image.attachmentId) ? [byId.get(image.attachmentId)!] : [],
    );
    return { ...m, images };
  });
}

/** Client tools' images by tool call id: what a turn resumed with tool outputs sends after the results. */
export type ToolImages = ReadonlyMap<string, ImagePart[]>;

/** Stores the images of tool outputs just given, as a message's are. */
export async function storeToolImages(images: ToolImages, attachments: AttachmentStore | undefined, userId: string | null): Promise<Map<string, ImagePart[]>> {
  const stored = new Map<string, ImagePart[]>();
  for (const [callId, parts] of images) stored.set(callId, await storeTurnImages(parts, attachments, userId));
  return stored;
}

/** A paused run's earlier tool images loaded again. */
export async function loadToolImages(
  refs: Readonly<Record<string, ImagePart[]>> | undefined,
  attachments: AttachmentStore | undefined,
): Promise<Map<string, ImagePart[]>> {
  const loaded = new Map<string, ImagePart[]>();
  for (const [callId, parts] of Object.entries(refs ?? {})) loaded.set(callId, await loadTurnImages(parts, attachments));
  return loaded;
}

export const toolImageRefs = (images: ToolImages): Record<string, ImagePart[]> => Object.fromEntries([...images].map(([id, parts]) => [id, imageRefs(parts)]));

/** The tool results with their images: the wire format sends them after the results (see `withToolImages` in llm/). */
export function attachToolImages(messages: ChatMessage[], images: ToolImages): ChatMessage[] {
  if (images.size === 0) return messages;
  return messages.map((m) => (m.role === 'tool' && images.has(m.toolCallId) ? { ...m, images: images.get(m.toolCallId)! } : m));
}

/** Adds the tools' images to every model call of the turn (after compaction, which rebuilds the messages). */
export const toolImagesHook = (images: ToolImages): AgentHooks => ({ beforeLlm: async (messages) => attachToolImages(messages, images) });
