import type { Readable } from 'node:stream';

/**
 * Blobs port: audio files. Downloads go through signed, expiring URLs served
 * by core (`GET /files/<key>?expires=&signature=`), whatever the adapter.
 * Adapters: core/adapters/blobs/directory.ts (embedded) and
 * core/adapters/blobs/gridfs.ts (production).
 */
export interface BlobInfo {
  key: string;
  size: number;
  contentType: string;
}

export interface Blobs {
  put(key: string, data: Buffer | Readable, contentType: string): Promise<BlobInfo>;
  /** null when absent */
  open(key: string): Promise<{ info: BlobInfo; stream: Readable } | null>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
