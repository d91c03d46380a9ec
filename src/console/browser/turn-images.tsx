import { useEffect, useState } from 'preact/hooks';
import type { ApiSession } from './api-session.js';
import type { TurnImage } from './chat-turn-state.js';

/**
 * An image the conversation keeps, fetched with the session's key (an <img src> sends no
 * Authorization header) and shown from an object URL, released when it leaves the page.
 */
function AttachmentImage({ session, conversationId, agentId, attachmentId, alt }: Props & { conversationId: string; attachmentId: string; alt: string }) {
  const [src, setSrc] = useState<string | undefined>(undefined);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let url: string | undefined;
    let stale = false;
    void session.client
      .GET('/v1/conversations/{id}/attachments/{attachmentId}', { params: { path: { id: conversationId, attachmentId }, query: { agentId } }, parseAs: 'blob' })
      .then(({ data }) => {
        if (stale) return;
        if (!data) return setFailed(true);
        url = URL.createObjectURL(data);
        setSrc(url);
      })
      .catch(() => !stale && setFailed(true));
    return () => {
      stale = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [conversationId, attachmentId]);
  if (failed) return <span class="muted">(an image that could not be loaded)</span>;
  return src ? <img src={src} alt={alt} /> : <span class="muted">Loading an image…</span>;
}

interface Props {
  session: ApiSession;
  /** Where a kept image is served from; unknown until the turn's stream names its conversation. */
  conversationId: string | undefined;
  agentId: string;
}

/** A question's images, in its bubble: attached here, kept by the conversation, or linked. */
export function TurnImages({ images, ...props }: Props & { images: readonly TurnImage[] }) {
  if (images.length === 0) return null;
  return (
    <ul class="turn-images" aria-label="Images">
      {images.map((image, i) => {
        const alt = `Image ${i + 1} of the message`;
        return (
          <li key={i}>
            {image.kind === 'data' && <img src={image.url} alt={`${alt}: ${image.name}`} />}
            {image.kind === 'attachment' &&
              (props.conversationId ? <AttachmentImage {...props} conversationId={props.conversationId} attachmentId={image.attachmentId} alt={alt} /> : null)}
            {image.kind === 'link' && (
              <a href={image.url} target="_blank" rel="noreferrer">
                {alt}
              </a>
            )}
          </li>
        );
      })}
    </ul>
  );
}
