import { useRef, useState } from 'preact/hooks';
import { type ApiSession, describeError } from './api-session.js';
import { readChatEvents } from './chat-stream.js';
import { type ChatTurn, applyChatEvent, newTurn } from './chat-turn-state.js';
import type { FollowUp } from './steer-box.js';

type StreamReply = Promise<{ data?: ReadableStream<Uint8Array> | null; error?: unknown; response: Response }>;

interface Options {
  session: ApiSession;
  /** A stream named the conversation (its first event). */
  onConversation: (conversationId: string) => void;
  say: (text: string) => void;
  /** A stream ended, however: the conversation list may have changed. */
  onSettled: () => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a queued follow-up's run may take to start once the turn before it completed. */
const FOLLOW_UP_WAIT = { attempts: 40, delayMs: 250 };

/**
 * The transcript's turns and the streams that build them: a chat, a run resumed by decisions or
 * on request, and the follow-ups queued while a turn ran, each followed as the next turn once the
 * one before completes (the server starts them; the console listens to their runs' events).
 */
export function useChatTurns({ session, onConversation, say, onSettled }: Options) {
  const [turns, setTurnsState] = useState<ChatTurn[]>([]);
  const [busy, setBusy] = useState(false);
  /** The turn a stream is building now: the one the steer box speaks to. */
  const [live, setLive] = useState<number | undefined>(undefined);
  // The turns as last set, for what a stream's end reads (the state of a render may be older).
  const current = useRef<ChatTurn[]>([]);
  const followUps = useRef(new Map<number, FollowUp[]>());

  const setTurns = (next: ChatTurn[]) => {
    current.current = next;
    setTurnsState(next);
  };
  const updateTurn = (index: number, change: (turn: ChatTurn) => ChatTurn) => setTurns(current.current.map((t, i) => (i === index ? change(t) : t)));
  const addTurn = (turn: ChatTurn): number => {
    setTurns([...current.current, turn]);
    return current.current.length - 1;
  };

  /** Reads a streamed reply into turn `index`; once the turn completes, its first queued follow-up is followed as the next turn. */
  const follow = async (index: number, request: StreamReply): Promise<void> => {
    setBusy(true);
    setLive(index);
    let completed = false;
    try {
      const { data, error, response } = await request;
      if (error || !data) {
        updateTurn(index, (t) => ({ ...t, state: 'failed', error: describeError(error, response) }));
        return;
      }
      await readChatEvents(data, (event) => {
        updateTurn(index, (t) => applyChatEvent(t, event));
        if (event.event === 'retrieval') onConversation(event.data.conversationId);
        // Announced once, not per delta: a screen reader reading every piece of a stream is noise.
        if (event.event === 'done') {
          completed = true;
          say('The answer is complete');
        }
        if (event.event === 'requires_approval') say('The agent waits for your approval');
        if (event.event === 'paused') say('The turn is paused');
      });
    } catch (err) {
      updateTurn(index, (t) => ({ ...t, state: 'failed', error: `The stream broke: ${String(err)}` }));
    } finally {
      setBusy(false);
      setLive(undefined);
      onSettled();
    }
    const [next, ...rest] = completed ? (followUps.current.get(index) ?? []) : [];
    if (next) {
      // Asked as the turn before it was: the same agent and user, the same working memory.
      const asked = current.current[index]?.scope;
      const at = addTurn({ ...newTurn(next.message), ...(asked ? { scope: asked } : {}) });
      followUps.current.set(at, rest);
      say(`Asking the follow-up: ${next.message}`);
      await follow(at, runEvents(next.runId));
    }
  };

  /**
   * A follow-up's run exists once the server starts it, just after the turn before completed: asked
   * after a moment, and again while it is not there yet (404) or not running here yet (409).
   */
  const runEvents = async (runId: string): StreamReply => {
    for (let attempt = 1; ; attempt++) {
      await sleep(FOLLOW_UP_WAIT.delayMs);
      const reply = await session.client.GET('/v1/runs/{runId}/events', { params: { path: { runId } }, parseAs: 'stream' });
      const notYet = reply.response.status === 404 || reply.response.status === 409;
      if (!notYet || attempt >= FOLLOW_UP_WAIT.attempts) return reply;
    }
  };

  return {
    turns,
    busy,
    live,
    setTurns: (next: ChatTurn[]) => {
      followUps.current.clear();
      setTurns(next);
    },
    updateTurn,
    addTurn,
    follow,
    /** Queues a follow-up on turn `index`, shown under it until it runs. */
    queueFollowUp: (index: number, followUp: FollowUp) => {
      followUps.current.set(index, [...(followUps.current.get(index) ?? []), followUp]);
      updateTurn(index, (t) => ({ ...t, followUps: [...t.followUps, followUp] }));
    },
  };
}
