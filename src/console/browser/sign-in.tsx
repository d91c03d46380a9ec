import { useState } from 'preact/hooks';
import { type ApiSession, checkSession, sessionFor, storeApiKey } from './api-session.js';

/** Asks for an API key and keeps it only once the server took it; a refused key shows the server's 401 as is. */
export function SignIn({ onSignedIn, initialError }: { onSignedIn: (session: ApiSession) => void; initialError?: string }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(initialError ?? '');
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const session = sessionFor(key.trim());
    const refused = await checkSession(session).catch((err: unknown) => String(err));
    setBusy(false);
    if (refused) {
      setError(refused);
      return;
    }
    storeApiKey(key.trim());
    onSignedIn(session);
  };

  return (
    <main class="sign-in" id="main">
      <h1>memrag console</h1>
      <form onSubmit={submit} aria-describedby="sign-in-help">
        <p id="sign-in-help">This server needs an API key. It is kept for this tab only (sessionStorage) and sent as a Bearer token.</p>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="status error" role="alert">
          {error}
        </p>
      </form>
    </main>
  );
}
