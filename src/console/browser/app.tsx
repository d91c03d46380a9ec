import { useEffect, useState } from 'preact/hooks';
import { AgentsPage } from './agents-page.js';
import { BlocksPage } from './blocks-page.js';
import { type ApiSession, checkSession, forgetApiKey, serverWantsKey, sessionFor, storedApiKey } from './api-session.js';
import { ChatPage } from './chat-page.js';
import { DocumentsPage } from './documents-page.js';
import { PAGES, hrefOf, useRoute } from './hash-route.js';
import { MemoriesPage } from './memories-page.js';
import { SearchPage } from './search-page.js';
import { SignIn } from './sign-in.js';
import { storeUserId, storedUserId } from './user-scope.js';
import { WorkflowsPage } from './workflows-page.js';

type Boot = { state: 'checking' } | { state: 'signed-in'; session: ApiSession } | { state: 'sign-in'; error?: string } | { state: 'failed'; error: string };

export function App() {
  const [boot, setBoot] = useState<Boot>({ state: 'checking' });
  const [agentId, setAgentId] = useState('default');
  const [userId, setUserId] = useState(storedUserId);
  const route = useRoute();

  useEffect(() => {
    void (async () => {
      try {
        const stored = storedApiKey();
        if (!(await serverWantsKey())) return setBoot({ state: 'signed-in', session: sessionFor() });
        if (!stored) return setBoot({ state: 'sign-in' });
        const session = sessionFor(stored);
        const refused = await checkSession(session);
        if (refused) forgetApiKey();
        setBoot(refused ? { state: 'sign-in', error: refused } : { state: 'signed-in', session });
      } catch (err) {
        setBoot({ state: 'failed', error: `The server could not be reached: ${String(err)}` });
      }
    })();
  }, []);

  useEffect(() => {
    document.title = `${PAGES.find((p) => p.name === route.page)?.label ?? ''} · memrag console`;
  }, [route.page]);

  if (boot.state === 'checking') return <p class="boot">Connecting…</p>;
  if (boot.state === 'failed')
    return (
      <p class="status error" role="alert">
        {boot.error}
      </p>
    );
  if (boot.state === 'sign-in') return <SignIn initialError={boot.error} onSignedIn={(session) => setBoot({ state: 'signed-in', session })} />;

  const { session } = boot;
  const signOut = () => {
    forgetApiKey();
    setBoot({ state: 'sign-in' });
  };
  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link: the href works without script, the handler also moves the focus. */}
      <a class="skip-link" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">memrag console</span>
        <nav aria-label="Pages">
          <ul>
            {PAGES.map((p) => (
              <li key={p.name}>
                <a href={hrefOf(p.name)} aria-current={route.page === p.name ? 'page' : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {/* The help text sits outside the label: inside it, it would be read as part of the field's name. */}
        <div class="agent-picker">
          <label for="agent-id">Agent</label>
          <input
            id="agent-id"
            value={agentId}
            onChange={(e) => setAgentId(e.currentTarget.value.trim() || 'default')}
            size={12}
            aria-describedby="agent-help"
          />
          <span id="agent-help" class="visually-hidden">
            Memories, conversations and chats are those of this agent id.
          </span>
        </div>
        <div class="agent-picker user-picker">
          <label for="user-id">User</label>
          <input
            id="user-id"
            value={userId ?? ''}
            placeholder="shared"
            onChange={(e) => {
              const next = e.currentTarget.value.trim() || undefined;
              storeUserId(next);
              setUserId(next);
            }}
            size={12}
            aria-describedby="user-help"
          />
          <span id="user-help" class="visually-hidden">
            Memories, conversations and chats are this user's, beside the agent's shared memories. Empty: new memories and chats are shared, and the lists show
            every user's.
          </span>
        </div>
        {session.apiKey ? (
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        ) : (
          <span class="badge" title="This server has no API keys: it listens on loopback only.">
            keyless
          </span>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {route.page === 'memories' && <MemoriesPage session={session} agentId={agentId} userId={userId} params={route.params} />}
        {route.page === 'blocks' && <BlocksPage session={session} agentId={agentId} userId={userId} />}
        {route.page === 'documents' && <DocumentsPage session={session} params={route.params} />}
        {route.page === 'search' && <SearchPage session={session} />}
        {route.page === 'chat' && <ChatPage session={session} agentId={agentId} userId={userId} params={route.params} />}
        {route.page === 'agents' && <AgentsPage session={session} onUseAgent={setAgentId} />}
        {route.page === 'workflows' && <WorkflowsPage session={session} userId={userId} />}
      </main>
    </>
  );
}
