import { GridFSBucket, ObjectId, type Db, type GridFSBucketWriteStream, type GridFSFile } from 'mongodb';
import { pipeline } from 'node:stream/promises';
import { checkByteRange, type BlobInfo, type Blobs } from '../../ports/blobs.ts';
import { blobKeySegments } from './keys.ts';
import { withSource } from './source.ts';

/**
 * Production blobs in MongoDB GridFS: the key is the file name and the
 * content type sits in the file's metadata. GridFS keeps every upload of a
 * name as its own file, so a put removes the versions older than itself and
 * a read takes the newest; two concurrent puts never delete each other's
 * newer upload, and a reader never sees a half-written one (GridFS writes the
 * file document only after the last chunk). A failed put aborts its upload;
 * a process killed mid-put leaves chunks with no file document, which
 * `sweepOrphans` removes once their newest chunk is old enough.
 */
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

function contentTypeOf(file: GridFSFile): string {
  const type = (file.metadata as { contentType?: unknown } | undefined)?.contentType;
  return typeof type === 'string' ? type : DEFAULT_CONTENT_TYPE;
}

function isFileNotFound(err: unknown): boolean {
  return err instanceof Error && /file not found/i.test(err.message);
}

/**
 * Waits (at most 5 s) for the chunk inserts an upload still has in flight, by
 * the driver's own count: a failed pipeline does not wait for them, and a
 * chunk that lands after the abort's delete would stay behind it.
 */
async function insertsSettled(upload: GridFSBucketWriteStream): Promise<void> {
  const state = (upload as unknown as { state?: { outstandingRequests?: number } }).state;
  for (let waited = 0; (state?.outstandingRequests ?? 0) > 0 && waited < 5000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function createGridFsBlobs(db: Db, bucketName = 'blobs'): Blobs {
  const bucket = new GridFSBucket(db, { bucketName });

  const newest = async (key: string): Promise<GridFSFile | null> =>
    bucket.find({ filename: key }).sort({ uploadDate: -1, _id: -1 }).limit(1).next();

  const remove = async (files: GridFSFile[]): Promise<void> => {
    for (const file of files) {
      try {
        await bucket.delete(file._id);
      } catch (err) {
        // a concurrent put or delete removed it first
        if (!isFileNotFound(err)) throw err;
      }
    }
  };

  return {
    put(key, data, contentType): Promise<BlobInfo> {
      return withSource(data, async (source) => {
        blobKeySegments(key);
        const upload = bucket.openUploadStream(key, { metadata: { contentType } });
        try {
          await pipeline(source, upload);
        } catch (err) {
          // The chunks written so far have no file document yet: without the abort they would stay in the bucket for good.
          await insertsSettled(upload);
          await upload.abort().catch(() => undefined);
          throw err;
        }
        const file = upload.gridFSFile;
        if (!file) throw new Error(`GridFS upload of ${key} finished without a file document`);
        const older = await bucket
          .find({
            filename: key,
            $or: [{ uploadDate: { $lt: file.uploadDate } }, { uploadDate: file.uploadDate, _id: { $lt: file._id } }],
          })
          .toArray();
        await remove(older);
        return { key, size: file.length, contentType };
      });
    },

    async open(key, range) {
      blobKeySegments(key);
      const file = await newest(key);
      if (!file) return null;
      // Every upload is its own file document, so its id names the version.
      const info: BlobInfo = { key, size: file.length, contentType: contentTypeOf(file), version: String(file._id) };
      if (!range) return { info, stream: bucket.openDownloadStream(file._id) };
      checkByteRange(key, range, file.length);
      // GridFS's `end` is EXCLUSIVE (mongodb lib/gridfs/download.js trims the last chunk at `end`), the port's inclusive.
      return { info, stream: bucket.openDownloadStream(file._id, { start: range.start, end: range.end + 1 }) };
    },

    async exists(key) {
      blobKeySegments(key);
      return (await newest(key)) !== null;
    },

    async delete(key) {
      blobKeySegments(key);
      await remove(await bucket.find({ filename: key }).toArray());
    },

    async ping() {
      await db.command({ ping: 1 });
    },

    async close() {
      // The database handle belongs to the client the runtime connected and closes.
    },

    async sweepOrphans(olderThan, limit) {
      // A chunk's _id is the ObjectId the driver made when it inserted the chunk, so its time is the write's.
      const cutoff = ObjectId.createFromTime(Math.floor(olderThan.getTime() / 1000));
      const chunks = db.collection(`${bucketName}.chunks`);
      // Uploads with chunks and no file document, judged by their NEWEST chunk (an upload still writing has recent chunks however
      // old its first one is). The driver makes files_id (an ObjectId) when the upload opens, before its first chunk, so the first
      // match, on the {files_id, n} index, leaves out every upload opened after the cutoff.
      const stale = await chunks.aggregate<{ _id: ObjectId }>([
        { $match: { files_id: { $lt: cutoff } } },
        { $group: { _id: '$files_id', newest: { $max: '$_id' } } },
        { $match: { newest: { $lt: cutoff } } },
        { $lookup: { from: `${bucketName}.files`, localField: '_id', foreignField: '_id', as: 'file' } },
        { $match: { file: { $size: 0 } } },
        { $limit: limit },
      ]).toArray();
      if (stale.length === 0) return 0;
      // Only chunks older than the cutoff: one an upload wrote after the look-up above is not taken with the rest.
      await chunks.deleteMany({ files_id: { $in: stale.map((s) => s._id) }, _id: { $lt: cutoff } });
      return stale.length;
    },
  };
}
