import { createHash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Embedder } from '../../../src/embeddings/embedder.js';

const HASH_BYTES = 32;

/**
 * The teacher's vectors on disk, one file per teacher: records of the text's sha256 and its
 * float32 vector, appended as batches finish, so an interrupted or repeated run embeds only what
 * is missing. Vectors are read back one at a time: half a million of them would not fit in memory.
 */
export class TeacherCache {
  private readonly fd: number;
  private readonly recordBytes: number;
  private readonly index = new Map<string, number>();
  private records: number;

  constructor(
    directory: string,
    readonly teacherId: string,
    readonly dimensions: number,
  ) {
    mkdirSync(directory, { recursive: true });
    const file = path.join(directory, `${teacherId.replace(/[^a-zA-Z0-9.-]+/g, '_')}-${dimensions}.bin`);
    this.recordBytes = HASH_BYTES + dimensions * 4;
    this.fd = openSync(file, existsSync(file) ? 'r+' : 'w+');
    // A record cut short by an interrupted write is ignored, and overwritten by the next append.
    this.records = Math.floor(fstatSync(this.fd).size / this.recordBytes);
    const hash = Buffer.alloc(HASH_BYTES);
    for (let r = 0; r < this.records; r++) {
      readSync(this.fd, hash, 0, HASH_BYTES, r * this.recordBytes);
      this.index.set(hash.toString('hex'), r);
    }
  }

  get size(): number {
    return this.records;
  }

  has(text: string): boolean {
    return this.index.has(hashOf(text));
  }

  /** Copies the teacher's vector of `text` into `out`. */
  read(text: string, out: Float32Array): void {
    const record = this.index.get(hashOf(text));
    if (record === undefined) throw new Error(`no teacher vector cached for ${JSON.stringify(text.slice(0, 60))}`);
    readSync(this.fd, new Uint8Array(out.buffer, out.byteOffset, this.dimensions * 4), 0, this.dimensions * 4, record * this.recordBytes + HASH_BYTES);
  }

  /**
   * Embeds the texts not cached yet, `batch` at a time, appending each batch; returns how many it
   * embedded and the seconds the teacher took.
   */
  async fill(
    teacher: Embedder,
    texts: string[],
    batch: number,
    onProgress?: (done: number, total: number) => void,
  ): Promise<{ embedded: number; seconds: number }> {
    // By length: the teacher pads every text of a call to the longest, so like lengths together waste least.
    const missing = [...new Set(texts.filter((t) => !this.has(t)))].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
    let seconds = 0;
    for (let at = 0; at < missing.length; at += batch) {
      const part = missing.slice(at, at + batch);
      const started = performance.now();
      const vectors = await teacher.embed(part);
      seconds += (performance.now() - started) / 1000;
      this.append(part, vectors);
      onProgress?.(Math.min(at + batch, missing.length), missing.length);
    }
    return { embedded: missing.length, seconds };
  }

  close(): void {
    closeSync(this.fd);
  }

  private append(texts: string[], vectors: number[][]): void {
    const buffer = Buffer.alloc(texts.length * this.recordBytes);
    texts.forEach((text, i) => {
      const vector = vectors[i]!;
      if (vector.length !== this.dimensions) throw new Error(`the teacher gave ${vector.length} dimensions, expected ${this.dimensions}`);
      const offset = i * this.recordBytes;
      Buffer.from(hashOf(text), 'hex').copy(buffer, offset);
      for (let d = 0; d < this.dimensions; d++) buffer.writeFloatLE(vector[d]!, offset + HASH_BYTES + d * 4);
    });
    writeSync(this.fd, buffer, 0, buffer.length, this.records * this.recordBytes);
    texts.forEach((text, i) => this.index.set(hashOf(text), this.records + i));
    this.records += texts.length;
  }
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
