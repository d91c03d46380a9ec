import type { Results } from '@electric-sql/pglite';

/** What the thread that hosts PGlite is started with (structured-cloneable). */
export interface PgliteThreadInit {
  /** A data directory, or undefined for a database in memory. */
  dataDir?: string;
  /** `shared_buffers` for a data directory (see PGLITE_SHARED_BUFFERS). */
  sharedBuffers?: string;
}

/**
 * A statement's options as they cross to the thread. Parsers are functions, which cannot: the
 * thread returns the raw text of the types they are for, and the caller's thread applies them.
 */
export interface ThreadQueryOptions {
  rowMode?: 'array' | 'object';
  paramTypes?: number[];
  rawTypes?: number[];
}

export type PgliteThreadRequest =
  | { op: 'query'; id: number; txId?: number; sql: string; params: unknown[]; options: ThreadQueryOptions }
  | { op: 'exec'; id: number; txId?: number; sql: string; options: ThreadQueryOptions }
  | { op: 'begin'; id: number }
  /** Ends the transaction begun by request `txId`: COMMIT, or ROLLBACK when `commit` is false. */
  | { op: 'end'; id: number; txId: number; commit: boolean }
  | { op: 'rollback'; id: number; txId: number }
  | { op: 'bind-vectors'; id: number }
  | { op: 'dump'; id: number; compression: 'none' | 'gzip' | 'auto' }
  | { op: 'close'; id: number };

/** A failure as it crosses: its message, name and the fields PostgreSQL reported (code, detail, …). */
export interface ThreadError {
  name: string;
  message: string;
  fields: Record<string, string | number | boolean>;
}

export type PgliteThreadReply =
  | { id: number; ok: true; value?: Results | Results[] | { bytes: ArrayBuffer; type: string } }
  | { id: number; ok: false; error: ThreadError };

/** The thread's first message: PGlite opened, or why it did not. */
export type PgliteThreadReady = { ready: true } | { ready: false; error: ThreadError };

/** The fields of a PGlite or PostgreSQL error worth keeping: those the callers read (code, constraint…). */
export function toThreadError(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return { name: error.name, message: error.message, fields };
}

export function fromThreadError(error: ThreadError): Error {
  const revived = Object.assign(new Error(error.message), error.fields);
  revived.name = error.name;
  return revived;
}
