import { useState } from 'preact/hooks';
import { type ApiSession, describeError } from './api-session.js';

export interface FollowUp {
  runId: string;
  message: string;
}

interface Props {
  session: ApiSession;
  /** The running turn's run. */
  runId: string;
  /** A follow-up was queued: it starts the conversation's next turn once this one completes. */
  onFollowUp: (followUp: FollowUp) => void;
  onStatus: (text: string, isError?: boolean) => void;
}

/**
 * What a person can tell a turn while it runs (`POST /v1/runs/{runId}/messages` and `/pause`):
 * a steering message that joins it before its next model call, a follow-up that becomes the next
 * turn, or a pause at its next step.
 */
export function SteerBox({ session, runId, onFollowUp, onStatus }: Props) {
  const [message, setMessage] = useState('');
  const [sending, setSending] = useState(false);
  const params = { path: { runId } };

  const send = async (mode: 'steer' | 'follow_up') => {
    const text = message.trim();
    if (!text) return onStatus('Write the message to send to the running turn first', true);
    setSending(true);
    try {
      const { data, error, response } = await session.client.POST('/v1/runs/{runId}/messages', { params, body: { message: text, mode } });
      if (error) return onStatus(describeError(error, response), true);
      setMessage('');
      if (mode === 'follow_up' && data.followUp) onFollowUp(data.followUp);
      onStatus(mode === 'steer' ? 'Sent: it joins the turn before its next model call' : 'Queued: it starts the next turn once this one completes');
    } finally {
      setSending(false);
    }
  };

  const pause = async () => {
    setSending(true);
    try {
      const { error, response } = await session.client.POST('/v1/runs/{runId}/pause', { params });
      onStatus(error ? describeError(error, response) : 'The turn pauses before its next model call', Boolean(error));
    } finally {
      setSending(false);
    }
  };

  return (
    <section class="steer-box" aria-labelledby="steer-title">
      <h2 id="steer-title" class="visually-hidden">
        Steer the running turn
      </h2>
      <label for="steer-message">Tell the running turn</label>
      <input id="steer-message" value={message} onInput={(e) => setMessage(e.currentTarget.value)} aria-describedby="steer-help" />
      <span id="steer-help" class="muted">
        Steer: the agent reads it before its next model call. Follow up: it is asked as the next turn.
      </span>
      <div class="actions">
        <button type="button" disabled={sending} onClick={() => void send('steer')}>
          Steer
        </button>
        <button type="button" disabled={sending} onClick={() => void send('follow_up')}>
          Follow up
        </button>
        <button type="button" disabled={sending} onClick={() => void pause()}>
          Pause
        </button>
      </div>
    </section>
  );
}
