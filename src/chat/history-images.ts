import type { StoredMessage } from '../conversations/conversation-types.js';
import type { ChatMessage, ImagePart } from '../llm/messages.js';

/** What a stored conversation's turns do with its images (the tenant's AttachmentStore, and how far back they are sent). */
export interface ConversationImages {
  /** The last this many stored turns' images are sent again with their messages; older ones are not (0: none). */
  historyTurns: number;
  dataUrls(attachmentIds: readonly string[], conversationId: string): Promise<Map<string, string>>;
}

const imagesOf = (m: ChatMessage): ImagePart[] | undefined => (m.role === 'user' || m.role === 'tool' ? m.images : undefined);

/**
 * The stored messages with the images of the last `historyTurns` turns loaded (as data URLs), in
 * one read; an image gone (erased) is left out. Messages without images are the same objects.
 */
export async function withRecentImages(conversationId: string, messages: StoredMessage[], images: ConversationImages): Promise<StoredMessage[]> {
  const lastTurn = messages.reduce((n, m) => Math.max(n, m.turn), 0);
  const recent = (m: StoredMessage) => images.historyTurns > 0 && m.turn > lastTurn - images.historyTurns;
  const wanted = messages.flatMap((m) => (recent(m) ? (imagesOf(m.message) ?? []).flatMap((i) => (i.attachmentId && !i.url ? [i.attachmentId] : [])) : []));
  const urls = wanted.length > 0 ? await images.dataUrls(wanted, conversationId) : new Map<string, string>();
  return messages.map((m) => {
    const own = imagesOf(m.message);
    if (!own) return m;
    // Older turns keep their references (the stored view shows them) but send nothing.
    const loaded = recent(m)
      ? own.flatMap((i) => (i.url ? [i] : i.attachmentId && urls.has(i.attachmentId) ? [{ ...i, url: urls.get(i.attachmentId)! }] : []))
      : [];
    const message = { ...m.message, images: loaded } as ChatMessage;
    return { ...m, message };
  });
}
