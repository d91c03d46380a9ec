import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { DocumentChunks } from './document-chunks.js';
import { hrefOf } from './hash-route.js';
import { parseRanges } from './marked-text.js';
import { plural } from './plural.js';
import { ScrollTable } from './scroll-table.js';
import { StatusLine } from './status-line.js';
import { parseTagList } from './tag-list.js';
import { followJob, uploadDocument } from './upload-document.js';
import { useStatus } from './use-status.js';
import { TagsText } from './wrap-points.js';

type Document = Schemas['Document'];

interface Upload {
  name: string;
  sent: number;
  total: number;
  /** The ingestion job's stage and progress, once the file is sent. */
  job?: { stage: string; done: number; total: number };
  outcome?: string;
  failed?: boolean;
}

/** Upload by drag-and-drop or file picker, with progress; the list with tags; a document's chunks. */
export function DocumentsPage({ session, params }: { session: ApiSession; params: URLSearchParams }) {
  const { status, say, fail } = useStatus();
  const [documents, setDocuments] = useState<Document[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [uploadTags, setUploadTags] = useState('');
  const [dragging, setDragging] = useState(false);
  const [refresh, setRefresh] = useState(0);
  const [opened, setOpened] = useState<Document | undefined>(undefined);
  const openId = params.get('doc');

  const load = async (cursor?: string) => {
    const { data, error, response } = await session.client.GET('/v1/documents', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } });
    if (error) return fail(describeError(error, response));
    setDocuments((before) => (cursor ? [...before, ...data.items] : data.items));
    setNextCursor(data.nextCursor);
  };
  useEffect(() => void load(), [refresh]);

  useEffect(() => {
    if (!openId) return setOpened(undefined);
    void session.client.GET('/v1/documents/{id}', { params: { path: { id: openId } } }).then(({ data, error, response }) => {
      if (error) fail(describeError(error, response));
      else setOpened(data.document);
    });
  }, [openId]);

  const upload = async (files: File[]) => {
    const tags = parseTagList(uploadTags);
    const start = uploads.length;
    setUploads((u) => [...u, ...files.map((f) => ({ name: f.name, sent: 0, total: f.size }))]);
    const update = (i: number, change: Partial<Upload>) => setUploads((u) => u.map((x, j) => (j === start + i ? { ...x, ...change } : x)));
    // One after another: the server embeds each document as it arrives, and two cores are shared.
    for (const [i, file] of files.entries()) {
      try {
        const result = await uploadDocument(session, file, tags, (sent, total) => update(i, { sent, total }));
        if ('document' in result.body) update(i, { outcome: `${result.body.status}: ${plural(result.body.document.chunkCount, 'chunk', 'chunks')}` });
        else if ('job' in result.body) {
          const job = await followJob(session, result.body.job.id, ({ progress }) => update(i, { job: progress }));
          const documentId = job.result?.documentId;
          if (job.status !== 'succeeded' || typeof documentId !== 'string') {
            update(i, { outcome: job.error?.message ?? `The ingestion ${job.status}`, failed: true });
            continue;
          }
          const { data, error, response } = await session.client.GET('/v1/documents/{id}', { params: { path: { id: documentId } } });
          update(
            i,
            error
              ? { outcome: describeError(error, response), failed: true }
              : { outcome: `${String(job.result?.status)}: ${plural(data.document.chunkCount, 'chunk', 'chunks')}` },
          );
        } else update(i, { outcome: describeError(result.body, { status: result.status }), failed: true });
      } catch (err) {
        update(i, { outcome: String(err), failed: true });
      }
    }
    say(`Uploaded ${plural(files.length, 'file', 'files')}`);
    setRefresh((n) => n + 1);
  };

  const remove = async (doc: Document) => {
    const { error, response } = await session.client.DELETE('/v1/documents/{id}', { params: { path: { id: doc.id } } });
    if (error) return fail(describeError(error, response));
    say(`Deleted ${doc.title}`);
    if (openId === doc.id) location.hash = hrefOf('documents');
    setRefresh((n) => n + 1);
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const files = [...(e.dataTransfer?.files ?? [])];
    if (files.length) void upload(files);
  };

  return (
    <div class="page">
      <h1>Documents</h1>
      <StatusLine status={status} />
      <section class="panel" aria-labelledby="upload-title">
        <h2 id="upload-title">Upload</h2>
        {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target for the mouse; the file input inside is the keyboard's way. */}
        <div
          class={dragging ? 'drop-zone dragging' : 'drop-zone'}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <p>Drop .md, .txt, .html or .pdf files here, or</p>
          <label class="button">
            Choose files
            <input
              type="file"
              class="visually-hidden"
              multiple
              accept=".md,.markdown,.txt,.html,.htm,.pdf"
              onChange={(e) => {
                const files = [...(e.currentTarget.files ?? [])];
                e.currentTarget.value = '';
                if (files.length) void upload(files);
              }}
            />
          </label>
        </div>
        <label>
          Tags for the uploads (separated by commas)
          <input value={uploadTags} onInput={(e) => setUploadTags(e.currentTarget.value)} />
        </label>
        {uploads.length > 0 && (
          <ul class="uploads" aria-label="Uploads">
            {uploads.map((u, i) => (
              <li key={i}>
                <span>{u.name}</span>
                <span class="bars">
                  <progress max={u.total || 1} value={u.sent} aria-label={`Upload of ${u.name}`} />
                  {u.job && <progress class="ingestion" max={u.job.total || 1} value={u.job.done} aria-label={`Ingestion of ${u.name}`} />}
                </span>
                <span class={u.failed ? 'error' : ''}>
                  {u.outcome ?? (u.job ? `${u.job.stage} ${u.job.done}/${u.job.total}` : `${Math.round((100 * u.sent) / (u.total || 1))}%`)}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>

      {opened && (
        <section class="panel" aria-labelledby="document-title">
          <div class="page-head">
            <h2 id="document-title">{opened.title}</h2>
            <a href={hrefOf('documents')}>Back to the list</a>
          </div>
          <p>
            {opened.format}, {opened.textLength} characters, {plural(opened.chunkCount, 'chunk', 'chunks')}
            {opened.tags.length ? `, tagged ${opened.tags.join(', ')}` : ''}
          </p>
          <DocumentChunks
            session={session}
            document={opened}
            {...(params.get('chunk') ? { chunkId: params.get('chunk')! } : {})}
            quotes={parseRanges(params.get('quotes'))}
          />
        </section>
      )}

      <ScrollTable caption="Documents">
        <thead>
          <tr>
            <th scope="col">Title</th>
            <th scope="col">Format</th>
            <th scope="col">Tags</th>
            <th scope="col">Chunks</th>
            <th scope="col">Updated</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {documents.map((d) => (
            <tr key={d.id}>
              <td>
                <a href={hrefOf('documents', { doc: d.id })}>{d.title}</a>
              </td>
              <td>{d.format}</td>
              <td>
                <TagsText tags={d.tags} />
              </td>
              <td>{d.chunkCount}</td>
              <td>
                <time dateTime={d.updatedAt}>{new Date(d.updatedAt).toLocaleString()}</time>
              </td>
              <td>
                <button type="button" class="small danger" onClick={() => void remove(d)} aria-label={`Delete ${d.title}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>
      {documents.length === 0 && <p>No documents yet.</p>}
      {nextCursor && (
        <button type="button" onClick={() => void load(nextCursor)}>
          More documents
        </button>
      )}
    </div>
  );
}
