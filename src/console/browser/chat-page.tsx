import { useEffect, useState } from 'preact/hooks';
import type { ApiSession } from './api-session.js';
import { describeError } from './api-session.js';
import { CitationDialog } from './citation-dialog.js';
import type { CitedSource } from './cited-answer.js';
import { newTurn } from './chat-turn-state.js';
import { ChatTurnView } from './chat-turn-view.js';
import { ConversationList } from './conversation-list.js';
import { turnsOf } from './conversation-turns.js';
import { hrefOf } from './hash-route.js';
import { type AttachedImage, ImageAttachments } from './image-attachments.js';
import { type Range, parseRanges } from './marked-text.js';
import { StatusLine } from './status-line.js';
import { SteerBox } from './steer-box.js';
import { useChatTurns } from './use-chat-turns.js';
import { useStatus } from './use-status.js';

interface Props {
  session: ApiSession;
  agentId: string;
  /** The header's user: a new conversation is theirs, and the list shows theirs (everyone's without one). */
  userId: string | undefined;
  params: URLSearchParams;
}

/**
 * A streamed chat: conversations, the answer as it arrives (its reasoning folded under it), citations
 * to open, tool calls, approvals, images, and a steer box while a turn runs.
 * `#/chat?conversation=…&turn=…&quote=…` opens a stored conversation at a turn (see `turnHref`).
 */
export function ChatPage({ session, agentId, userId, params }: Props) {
  const { status, say, fail } = useStatus();
  const [conversationId, setConversationId] = useState<string | undefined>(undefined);
  // The user a conversation is with is fixed by its first turn: continuing it as anyone else is a 404.
  const [conversationUser, setConversationUser] = useState<string | null>(null);
  const [message, setMessage] = useState('');
  const [images, setImages] = useState<AttachedImage[]>([]);
  const [opened, setOpened] = useState<CitedSource | undefined>(undefined);
  const [listRefresh, setListRefresh] = useState(0);
  const { turns, busy, live, setTurns, updateTurn, addTurn, follow, queueFollowUp } = useChatTurns({
    session,
    say,
    onConversation: setConversationId,
    onSettled: () => setListRefresh((n) => n + 1),
  });
  const running = live === undefined ? undefined : turns[live];

  const send = (e: Event) => {
    e.preventDefault();
    const text = message.trim();
    if (busy) return;
    if (!text) {
      if (images.length > 0) fail('Write a message to go with the images');
      return;
    }
    setMessage('');
    setImages([]);
    const asUser = conversationId ? conversationUser : (userId ?? null);
    const index = addTurn({
      ...newTurn(
        text,
        images.map((i) => ({ kind: 'data', url: i.url, name: i.name })),
      ),
      scope: { agentId, userId: asUser },
    });
    if (!conversationId) setConversationUser(asUser);
    // With images the message is content parts; its text part is what recall and the stored turn read.
    const content = images.length === 0 ? text : [{ type: 'text', text }, ...images.map((i) => ({ type: 'image_url', image_url: { url: i.url } }))];
    void follow(
      index,
      session.client.POST('/v1/chat', {
        body: {
          message: content,
          agentId,
          stream: true,
          includeReasoning: true,
          ...(conversationId ? { conversationId } : {}),
          ...(asUser === null ? {} : { userId: asUser }),
        },
        parseAs: 'stream',
      }),
    );
  };

  const decide = (index: number, runId: string, decisions: { toolCallId: string; approve: boolean }[]) => {
    updateTurn(index, (t) => ({ ...t, state: 'streaming' }));
    void follow(
      index,
      session.client.POST('/v1/runs/{runId}/approvals', { params: { path: { runId } }, body: { decisions, stream: true }, parseAs: 'stream' }),
    );
  };

  const resume = (index: number, runId: string) => {
    updateTurn(index, (t) => ({ ...t, state: 'streaming' }));
    void follow(index, session.client.POST('/v1/runs/{runId}/resume', { params: { path: { runId } }, body: { stream: true }, parseAs: 'stream' }));
  };

  const open = async (id: string, at?: { turn: number; quote?: Range }) => {
    const { data, error, response } = await session.client.GET('/v1/conversations/{id}', { params: { path: { id }, query: { agentId } } });
    if (error) return fail(describeError(error, response));
    setConversationId(id);
    setConversationUser(data.conversation.userId);
    const stored = turnsOf(id, data.messages);
    const linked = at && stored.some((t) => t.number === at.turn);
    setTurns(linked ? stored.map((t) => (t.number === at.turn ? { ...t, linked: at.quote ? { quote: at.quote } : {} } : t)) : stored);
    say(linked ? `Opened ${data.conversation.title} at turn ${at.turn}` : `Opened ${data.conversation.title}`);
  };

  // A link to a conversation's turn, taken out of the address once read: followed again, the same
  // link then changes the address, and opens the turn again.
  useEffect(() => {
    const id = params.get('conversation');
    if (!id) return;
    setOpened(undefined);
    const turn = Number(params.get('turn'));
    const [quote] = parseRanges(params.get('quote'));
    void open(id, Number.isInteger(turn) && turn > 0 ? { turn, ...(quote ? { quote } : {}) } : undefined);
    history.replaceState(null, '', hrefOf('chat'));
  }, [params]);

  return (
    <div class="page with-aside">
      <ConversationList
        session={session}
        agentId={agentId}
        {...(userId ? { userId } : {})}
        {...(conversationId ? { currentId: conversationId } : {})}
        refresh={listRefresh}
        onOpen={(id) => void open(id)}
        onNew={() => {
          setConversationId(undefined);
          setConversationUser(null);
          setTurns([]);
          say('New conversation');
        }}
        onStatus={(text, isError) => (isError ? fail(text) : say(text))}
      />
      <section class="content chat" aria-labelledby="chat-title">
        <h1 id="chat-title">Chat</h1>
        <StatusLine status={status} />
        <div class="transcript">
          {turns.length === 0 && (
            <p class="muted">Ask about your memories and documents. Without an LLM the server answers extractively, citing its sources.</p>
          )}
          {turns.map((turn, i) => (
            <ChatTurnView
              key={i}
              turn={turn}
              session={session}
              agentId={agentId}
              onResume={() => turn.runId && resume(i, turn.runId)}
              onOpenSource={setOpened}
              onDecide={(decisions) => turn.runId && decide(i, turn.runId, decisions)}
            />
          ))}
        </div>
        {live !== undefined && running?.runId && running.state === 'streaming' && (
          <SteerBox
            session={session}
            runId={running.runId}
            onFollowUp={(followUp) => queueFollowUp(live, followUp)}
            onStatus={(text, isError) => (isError ? fail(text) : say(text))}
          />
        )}
        <form class="composer" onSubmit={send}>
          <label for="chat-message">Message</label>
          <textarea
            id="chat-message"
            rows={3}
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
            onKeyDown={(e) => {
              // Enter sends, Shift+Enter breaks the line: as chat boxes do.
              if (e.key === 'Enter' && !e.shiftKey) send(e);
            }}
            aria-describedby="chat-help"
          />
          <ImageAttachments images={images} onChange={setImages} onRefuse={fail} disabled={busy} />
          <span id="chat-help" class="muted">
            Enter sends; Shift+Enter starts a new line. {describeChatUser(conversationId ? conversationUser : (userId ?? null))}
          </span>
          <button type="submit" disabled={busy}>
            {busy ? 'Answering…' : 'Send'}
          </button>
        </form>
      </section>
      {opened && (
        <CitationDialog
          session={session}
          source={opened}
          {...(conversationUser === null ? {} : { userId: conversationUser })}
          onClose={() => setOpened(undefined)}
        />
      )}
    </div>
  );
}

/** Whom the chat answers as: what it recalls depends on it. */
function describeChatUser(userId: string | null): string {
  return userId === null ? 'As no user: shared memories only.' : `As user ${userId}: their memories and the shared ones.`;
}
