import { randomUUID } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { access, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { checkByteRange, CorruptBlobError, type BlobInfo, type Blobs } from '../../ports/blobs.ts';
import { blobKeySegments } from './keys.ts';
import { withSource } from './source.ts';

/**
 * Embedded blobs in a local directory: `data/<key>` holds one JSON header
 * line (the content type) followed by the bytes; `tmp/` holds uploads in
 * progress. A blob is written under tmp/ and renamed into place, and because
 * header and bytes share one file that single rename swaps both: readers see
 * the old version or the new one, never a mix of two concurrent puts. A
 * process killed mid-put leaves its tmp/ file; `sweepOrphans` removes those
 * not written to for a while.
 */
const HEADER_MAX = 4096;
const CONTENT_TYPE_MAX = 255;

function isMissing(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function header(contentType: string): Buffer {
  if (contentType.length === 0 || contentType.length > CONTENT_TYPE_MAX) {
    throw new RangeError(`content type must be 1 to ${CONTENT_TYPE_MAX} characters`);
  }
  // JSON escapes any newline, so the first '\n' always ends the header.
  return Buffer.from(JSON.stringify({ contentType }) + '\n');
}

/** The content type from a header line, or null when the line is not one this adapter wrote. */
function parseHeader(line: Buffer): string | null {
  try {
    const parsed = JSON.parse(line.toString('utf8')) as { contentType?: unknown } | null;
    const type = parsed?.contentType;
    return typeof type === 'string' && type.length > 0 && type.length <= CONTENT_TYPE_MAX ? type : null;
  } catch {
    return null;
  }
}

export function createDirectoryBlobs(dir: string): Blobs {
  const root = path.resolve(dir);
  const dataRoot = path.join(root, 'data');
  const tmpRoot = path.join(root, 'tmp');

  const locate = (key: string): string => {
    const file = path.join(dataRoot, ...blobKeySegments(key));
    // The segment check already forbids `..`; this guards against whatever it might miss.
    if (!file.startsWith(dataRoot + path.sep)) throw new RangeError(`invalid blob key: ${JSON.stringify(key)}`);
    return file;
  };

  return {
    put(key, data, contentType): Promise<BlobInfo> {
      return withSource(data, async (source) => {
        const target = locate(key);
        const head = header(contentType);
        await Promise.all([mkdir(tmpRoot, { recursive: true }), mkdir(path.dirname(target), { recursive: true })]);
        const tmp = path.join(tmpRoot, randomUUID());
        try {
          const out = createWriteStream(tmp);
          out.write(head);
          await pipeline(source, out);
          const { size } = await stat(tmp);
          await rename(tmp, target);
          return { key, size: size - head.length, contentType };
        } catch (err) {
          await rm(tmp, { force: true });
          throw err;
        }
      });
    },

    async open(key, range) {
      const file = locate(key);
      let handle;
      try {
        handle = await open(file, 'r');
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
      // Reading through the open descriptor keeps this version even if a put or delete replaces the path meanwhile.
      try {
        const info = await handle.stat();
        if (!info.isFile()) {
          await handle.close();
          return null;
        }
        const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEADER_MAX), 0, HEADER_MAX, 0);
        const end = buffer.subarray(0, bytesRead).indexOf('\n');
        if (end < 0) throw new CorruptBlobError(key, 'no header line');
        const contentType = parseHeader(buffer.subarray(0, end));
        if (contentType === null) throw new CorruptBlobError(key, 'unreadable header line');
        const start = end + 1;
        const size = info.size - start;
        // A put renames a new file into place, so another version is another inode (and mtime).
        const blob: BlobInfo = { key, size, contentType, version: `${info.dev}:${info.ino}:${info.mtimeMs}` };
        if (!range) return { info: blob, stream: handle.createReadStream({ start }) };
        checkByteRange(key, range, size);
        // fs's `end` is inclusive, as the port's is.
        return { info: blob, stream: handle.createReadStream({ start: start + range.start, end: start + range.end }) };
      } catch (err) {
        await handle.close();
        throw err;
      }
    },

    async exists(key) {
      try {
        return (await stat(locate(key))).isFile();
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
    },

    async delete(key) {
      await rm(locate(key), { force: true });
    },

    async ping() {
      await mkdir(root, { recursive: true });
      await access(root, constants.W_OK);
    },

    async close() {
      // Nothing is held open between calls; streams close their descriptor when read or destroyed.
    },

    async sweepOrphans(olderThan, limit) {
      // A put that failed removes its tmp file; one a crash cut off leaves it. A put in progress writes to it, so its mtime is recent.
      let names: string[];
      try {
        names = await readdir(tmpRoot);
      } catch (err) {
        if (isMissing(err)) return 0;
        throw err;
      }
      let removed = 0;
      for (const name of names) {
        if (removed >= limit) break;
        const file = path.join(tmpRoot, name);
        try {
          const info = await stat(file);
          if (!info.isFile() || info.mtimeMs >= olderThan.getTime()) continue;
        } catch (err) {
          // renamed into place or removed meanwhile
          if (isMissing(err)) continue;
          throw err;
        }
        await rm(file, { force: true });
        removed++;
      }
      return removed;
    },
  };
}
