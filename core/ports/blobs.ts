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
  /** the whole blob's size in bytes, also when `open` was asked for a range */
  size: number;
  contentType: string;
  /**
   * From `open` only: an opaque token that differs between two puts of the
   * same key (directory: inode and mtime; GridFS: the file document's id), so
   * a download's ETag changes when the key is written again. Absent when an
   * implementation cannot tell versions apart.
   */
  version?: string;
}

/** Inclusive byte offsets into a blob: `{ start: 0, end: size - 1 }` is all of it. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Throws RangeError unless `range` is whole bytes inside a blob of `size`
 * bytes; adapters call it on what `open` was given, so a caller's mistake is
 * an error and never a short or misplaced stream.
 */
export function checkByteRange(key: string, range: ByteRange, size: number): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end >= size) {
    throw new RangeError(`byte range ${start}-${end} is not inside blob ${key} of ${size} bytes`);
  }
}

export interface Blobs {
  put(key: string, data: Buffer | Readable, contentType: string): Promise<BlobInfo>;
  /**
   * null when absent; throws CorruptBlobError when the stored file is damaged.
   * With `range` (already checked against the size by the caller; RangeError
   * when it does not fit the stored version) the stream holds only bytes
   * `range.start` to `range.end` inclusive; `info.size` is still the whole blob's.
   */
  open(key: string, range?: ByteRange): Promise<{ info: BlobInfo; stream: Readable } | null>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Removes what uploads cut off by a crash left behind (a process killed
   * mid-put never deletes its partial data): at most `limit` such uploads per
   * call, only those whose last write is older than `olderThan` (an upload in
   * progress looks the same until it ends, so the age is what tells them
   * apart). Resolves with the number of uploads removed; `limit` of them means
   * more may be waiting. GridFS: chunks whose file document is missing, by the
   * time of the newest chunk (its ObjectId `_id`); directory: files in `tmp/`,
   * by mtime. Never touches a stored blob. Optional: an adapter without
   * crash leftovers has none. Core's `core:blob-orphan-sweep` worker
   * (pipelines role) calls it.
   */
  sweepOrphans?(olderThan: Date, limit: number): Promise<number>;
}
