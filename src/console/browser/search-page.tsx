import { useState } from 'preact/hooks';
import type { JsonBody, Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { hrefOf } from './hash-route.js';
import { plural } from './plural.js';
import { ScrollTable } from './scroll-table.js';
import { StatusLine } from './status-line.js';
import { parseTagList } from './tag-list.js';
import { useStatus } from './use-status.js';

type SearchHit = Schemas['SearchHit'];
type SearchBody = Required<JsonBody<'searchKnowledge'>>;

/** A playground for `POST /v1/search`: mode, reranker, candidateK and topK, with each hit's ranks. */
export function SearchPage({ session }: { session: ApiSession }) {
  const { status, say, fail } = useStatus();
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<SearchBody['mode']>('hybrid');
  const [reranker, setReranker] = useState<SearchBody['reranker']>('none');
  const [candidateK, setCandidateK] = useState(50);
  const [topK, setTopK] = useState(5);
  const [tags, setTags] = useState('');
  const [hits, setHits] = useState<SearchHit[]>([]);

  const search = async (e: Event) => {
    e.preventDefault();
    const tagsAny = parseTagList(tags);
    const started = performance.now();
    const { data, error, response } = await session.client.POST('/v1/search', {
      body: { query, mode, reranker, candidateK, topK, ...(tagsAny.length ? { tagsAny } : {}) },
    });
    // The server's 400 names the field (e.g. a reranker this server lacks): shown as is.
    if (error) return fail(describeError(error, response));
    setHits(data.hits);
    say(`${plural(data.hits.length, 'hit', 'hits')} in ${Math.round(performance.now() - started)} ms`);
  };

  return (
    <div class="page">
      <h1>Search playground</h1>
      {/* biome-ignore lint/a11y/useSemanticElements: <form role="search"> is the landmark every browser supports. */}
      <form class="grid-form" onSubmit={search} role="search" aria-label="Search documents">
        <label class="wide">
          Query
          <input type="search" required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <label>
          Mode
          <select value={mode} onChange={(e) => setMode(e.currentTarget.value as SearchBody['mode'])}>
            <option value="hybrid">hybrid</option>
            <option value="vector">vector</option>
            <option value="text">text</option>
          </select>
        </label>
        <label>
          Reranker
          <select value={reranker} onChange={(e) => setReranker(e.currentTarget.value as SearchBody['reranker'])}>
            <option value="none">none</option>
            <option value="lexical">lexical</option>
            <option value="cross-encoder">cross-encoder</option>
          </select>
        </label>
        <label>
          candidateK
          <input type="number" min={1} value={candidateK} onInput={(e) => setCandidateK(Number(e.currentTarget.value))} />
        </label>
        <label>
          topK
          <input type="number" min={1} value={topK} onInput={(e) => setTopK(Number(e.currentTarget.value))} />
        </label>
        <label>
          Tags (any of)
          <input value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      <StatusLine status={status} />
      <ScrollTable caption="Hits">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Document › headings</th>
            <th scope="col">Characters</th>
            <th scope="col">Score</th>
            <th scope="col">Vector rank</th>
            <th scope="col">Text rank</th>
            <th scope="col">Rerank score</th>
            <th scope="col">Snippet</th>
          </tr>
        </thead>
        <tbody>
          {hits.map((h, i) => (
            <tr key={h.chunkId}>
              <td>{i + 1}</td>
              <td>
                <a href={hrefOf('documents', { doc: h.documentId, chunk: h.chunkId })}>{[h.title, ...h.headingPath].join(' › ')}</a>
              </td>
              <td>
                {h.start}–{h.end}
              </td>
              <td>{h.score.toFixed(4)}</td>
              <td>{h.ranks.vector ?? '–'}</td>
              <td>{h.ranks.text ?? '–'}</td>
              <td>{h.rerankScore === undefined ? '–' : h.rerankScore.toFixed(4)}</td>
              <td class="prose">{h.snippet}</td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>
    </div>
  );
}
