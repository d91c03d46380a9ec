import type OpenAI from 'openai';
import type { ChatMessage, ImagePart } from './messages.js';

type WireMessage = OpenAI.Chat.ChatCompletionMessageParam;
type WirePart = OpenAI.Chat.ChatCompletionContentPart;

/** The images that can be sent: a stored image not loaded for this request (no url) is left out. */
const sendable = (images: readonly ImagePart[] | undefined) => (images ?? []).filter((image) => image.url !== undefined);

const imagePart = (image: ImagePart): WirePart => ({
  type: 'image_url',
  image_url: { url: image.url!, ...(image.detail ? { detail: image.detail } : {}) },
});

/** A user message's content: its text alone as a string (every provider reads that), or text and image parts. */
export function userWireContent(content: string, images: readonly ImagePart[] | undefined): string | WirePart[] {
  const sent = sendable(images);
  if (sent.length === 0) return content;
  return [...(content === '' ? [] : [{ type: 'text' as const, text: content }]), ...sent.map(imagePart)];
}

/**
 * OpenAI's tool messages hold text only, so a tool's images follow its run of tool results as a
 * user message naming the calls they came from (a user message between a call and its result
 * would break the pairing providers check).
 */
export function withToolImages(messages: readonly ChatMessage[], wire: WireMessage[]): WireMessage[] {
  if (!messages.some((m) => m.role === 'tool' && sendable(m.images).length > 0)) return wire;
  const out: WireMessage[] = [];
  let pending: WirePart[] = [];
  messages.forEach((m, i) => {
    out.push(wire[i]!);
    if (m.role === 'tool' && sendable(m.images).length > 0) {
      pending.push({ type: 'text', text: `The images tool call ${m.toolCallId} returned:` }, ...sendable(m.images).map(imagePart));
    }
    if (pending.length > 0 && messages[i + 1]?.role !== 'tool') {
      out.push({ role: 'user', content: pending });
      pending = [];
    }
  });
  return out;
}
