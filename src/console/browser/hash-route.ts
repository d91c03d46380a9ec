import { useEffect, useState } from 'preact/hooks';
import { formatRanges } from './marked-text.js';

export type PageName = 'memories' | 'blocks' | 'documents' | 'search' | 'chat' | 'agents' | 'workflows';

export const PAGES: readonly { name: PageName; label: string }[] = [
  { name: 'memories', label: 'Memories' },
  { name: 'blocks', label: 'Blocks' },
  { name: 'documents', label: 'Documents' },
  { name: 'search', label: 'Search' },
  { name: 'chat', label: 'Chat' },
  { name: 'agents', label: 'Agents' },
  { name: 'workflows', label: 'Workflows' },
];

export interface Route {
  page: PageName;
  params: URLSearchParams;
}

/** `#/documents?doc=…`: in the fragment, so that the server serves one page and reloads keep the view. */
function parse(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?');
  const page = PAGES.find((p) => p.name === path)?.name ?? 'memories';
  return { page, params: new URLSearchParams(query) };
}

export function hrefOf(page: PageName, params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params).toString();
  return `#/${page}${query ? `?${query}` : ''}`;
}

/**
 * The chat with a stored conversation open at one of its turns (focused, with `quote`'s characters
 * of its question marked): where a memory's origin or a cited turn links to.
 */
export function turnHref(conversationId: string, turn: number | null, quote?: { start: number; end: number } | null): string {
  return hrefOf('chat', {
    conversation: conversationId,
    ...(turn === null ? {} : { turn: String(turn) }),
    ...(turn !== null && quote ? { quote: formatRanges([quote]) } : {}),
  });
}

export function navigate(page: PageName, params: Record<string, string> = {}): void {
  location.hash = hrefOf(page, params);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parse(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
