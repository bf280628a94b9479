import type { Readable } from 'node:stream';

/**
 * Blobs port: audio files. Downloads go through signed, expiring URLs served
 * by core (`GET /files/<key>?expires=&signature=`), whatever the adapter.
 * Adapters: core/adapters/blobs/directory.ts (embedded) and
 * core/adapters/blobs/gridfs.ts (production).
 */
/** A stored blob that cannot be read back as it was written (a damaged file); adapters throw it from `open`. */
export class CorruptBlobError extends Error {
  constructor(readonly key: string, reason: string) {
    super(`blob ${key} is damaged: ${reason}`);
    this.name = 'CorruptBlobError';
  }
}

export interface BlobInfo {
  key: string;
  size: number;
  contentType: string;
}

export interface Blobs {
  put(key: string, data: Buffer | Readable, contentType: string): Promise<BlobInfo>;
  /** null when absent; throws CorruptBlobError when the stored file is damaged */
  open(key: string): Promise<{ info: BlobInfo; stream: Readable } | null>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
