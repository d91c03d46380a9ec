import type { Schemas } from '../../client/memrag-client.js';
import type { ApiSession } from './api-session.js';

export interface UploadResult {
  status: number;
  /** The reply: the queued job (202), IngestReply had the server ingested it at once, the API's error otherwise. */
  body: Schemas['JobReply'] | Schemas['IngestReply'] | { error: { code: string; message: string } };
}

/**
 * Posts one file to `/v1/documents` as multipart, as a job (`async`): a large file is ingested by
 * the workers instead of being refused, and its progress can be shown (followJob). Reports the
 * bytes sent. XMLHttpRequest rather than the typed client: fetch reports no upload progress. The
 * reply is typed from the same OpenAPI document.
 */
export function uploadDocument(session: ApiSession, file: File, tags: string[], onProgress: (sent: number, total: number) => void): Promise<UploadResult> {
  const form = new FormData();
  form.append('file', file, file.name);
  form.append('title', file.name.replace(/\.[^.]+$/, ''));
  // The file's name, so that uploading it again replaces the document rather than adding a second.
  form.append('source', file.name);
  form.append('async', 'true');
  for (const tag of tags) form.append('tags', tag);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${session.baseUrl}/v1/documents`);
    if (session.apiKey) xhr.setRequestHeader('Authorization', `Bearer ${session.apiKey}`);
    xhr.responseType = 'json';
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => resolve({ status: xhr.status, body: xhr.response as UploadResult['body'] });
    xhr.onerror = () => reject(new Error(`The upload of ${file.name} failed: the server could not be reached`));
    xhr.send(form);
  });
}

/**
 * Polls a job until it ends, reporting its progress at each look; resolves with the job as it
 * ended. Polling rather than the job's SSE stream: EventSource cannot send the API key.
 */
export async function followJob(session: ApiSession, id: string, onProgress: (job: Schemas['Job']) => void, pollMs = 250): Promise<Schemas['Job']> {
  for (;;) {
    const { data, error } = await session.client.GET('/v1/jobs/{id}', { params: { path: { id } } });
    if (error) throw new Error(error.error.message);
    onProgress(data.job);
    if (data.job.status !== 'queued' && data.job.status !== 'running') return data.job;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
