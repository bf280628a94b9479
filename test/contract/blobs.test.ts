import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { Binary, GridFSBucket, MongoClient, ObjectId, type Db } from 'mongodb';
import { createDirectoryBlobs } from '../../core/adapters/blobs/directory.ts';
import { createGridFsBlobs } from '../../core/adapters/blobs/gridfs.ts';
import type { Blobs } from '../../core/ports/blobs.ts';

/** The blobs contract, run against every adapter. */
type Harness = { blobs: Blobs; close(): Promise<void> };
type Open = () => Promise<Harness>;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

async function content(blobs: Blobs, key: string): Promise<{ body: string; size: number; contentType: string } | null> {
  const found = await blobs.open(key);
  if (!found) return null;
  return { body: (await readAll(found.stream)).toString('utf8'), size: found.info.size, contentType: found.info.contentType };
}

function blobsContract(adapter: string, open: Open): void {
  const it = (rule: string, body: (blobs: Blobs, t: ExecutionContext) => Promise<void>) =>
    test(`${adapter}: ${rule}`, async (t) => {
      const harness = await open();
      t.teardown(() => harness.close());
      await body(harness.blobs, t);
    });

  it('a stored buffer reads back with its size and content type', async (blobs, t) => {
    const info = await blobs.put('jobs/job_1.mp3', Buffer.from('xin chào'), 'audio/mpeg');
    t.deepEqual(info, { key: 'jobs/job_1.mp3', size: Buffer.byteLength('xin chào'), contentType: 'audio/mpeg' });
    t.deepEqual(await content(blobs, 'jobs/job_1.mp3'), { body: 'xin chào', size: info.size, contentType: 'audio/mpeg' });
    t.true(await blobs.exists('jobs/job_1.mp3'));
  });

  it('a stream is stored whole', async (blobs, t) => {
    const parts = Array.from({ length: 64 }, (_, i) => Buffer.alloc(16 * 1024, i));
    const info = await blobs.put('books/b1/chapter-001.mp3', Readable.from(parts), 'audio/mpeg');
    t.is(info.size, 64 * 16 * 1024);
    const found = await blobs.open('books/b1/chapter-001.mp3');
    t.truthy(found);
    t.true((await readAll(found!.stream)).equals(Buffer.concat(parts)));
  });

  it('a put refused before it reads its stream (a bad key) destroys the stream, so its writer stops waiting', async (blobs, t) => {
    const source = new PassThrough();
    await t.throwsAsync(blobs.put('../outside', source, 'audio/wav'));
    t.true(source.destroyed);
  });

  it('a put replaces the previous version, content type included', async (blobs, t) => {
    await blobs.put('a/b.wav', Buffer.from('first version'), 'audio/wav');
    await blobs.put('a/b.wav', Buffer.from('second'), 'audio/ogg');
    t.deepEqual(await content(blobs, 'a/b.wav'), { body: 'second', size: 6, contentType: 'audio/ogg' });
  });

  it('keys with slashes are independent of their neighbours', async (blobs, t) => {
    await blobs.put('x/1', Buffer.from('one'), 'text/plain');
    await blobs.put('x/2', Buffer.from('two'), 'text/plain');
    await blobs.put('x/1.meta.json', Buffer.from('three'), 'application/json');
    t.is((await content(blobs, 'x/1'))?.body, 'one');
    t.is((await content(blobs, 'x/2'))?.body, 'two');
    t.deepEqual(await content(blobs, 'x/1.meta.json'), { body: 'three', size: 5, contentType: 'application/json' });
    t.false(await blobs.exists('x'));
  });

  it('delete removes a blob; missing blobs read as null and delete quietly', async (blobs, t) => {
    await blobs.put('gone.mp3', Buffer.from('bye'), 'audio/mpeg');
    await blobs.delete('gone.mp3');
    t.false(await blobs.exists('gone.mp3'));
    t.is(await blobs.open('gone.mp3'), null);
    t.is(await blobs.open('never/was.mp3'), null);
    await t.notThrowsAsync(blobs.delete('never/was.mp3'));
  });

  it('keys that could escape the store are refused', async (blobs, t) => {
    for (const key of ['../escape', 'a/../../escape', '/etc/passwd', 'a//b', './a', '', 'a\\..\\b']) {
      await t.throwsAsync(blobs.put(key, Buffer.from('x'), 'text/plain'), { instanceOf: RangeError }, key);
      await t.throwsAsync(blobs.open(key), { instanceOf: RangeError }, key);
    }
  });

  // Over two GridFS chunks (255 KiB each by default), so ranges cross and end on chunk boundaries too.
  const CHUNK = 255 * 1024;
  const patterned = Buffer.from(Array.from({ length: 2 * CHUNK + 1000 }, (_, i) => (i * 7 + (i >> 8)) % 251));

  it('a ranged open streams exactly bytes start to end inclusive; info.size stays the whole blob\'s', async (blobs, t) => {
    const size = patterned.length;
    await blobs.put('books/b1/range.mp3', patterned, 'audio/mpeg');
    const ranges: Array<[string, number, number]> = [
      ['the start only', 0, 99],
      ['a middle part', 1000, 4999],
      ['the last byte', size - 1, size - 1],
      ['a single byte', 4242, 4242],
      ['the whole blob as a range', 0, size - 1],
      ['a part that crosses a chunk boundary', CHUNK - 10, CHUNK + 9],
      ['a part that ends on a chunk boundary', CHUNK - 100, CHUNK - 1],
      ['a part that starts on a chunk boundary', CHUNK, CHUNK + 99],
      ['the tail from inside the last chunk', 2 * CHUNK + 10, size - 1],
    ];
    for (const [what, start, end] of ranges) {
      const found = await blobs.open('books/b1/range.mp3', { start, end });
      t.truthy(found, what);
      t.deepEqual(found!.info, { key: 'books/b1/range.mp3', size, contentType: 'audio/mpeg', version: found!.info.version }, what);
      const bytes = await readAll(found!.stream);
      t.is(bytes.length, end - start + 1, what);
      t.true(bytes.equals(patterned.subarray(start, end + 1)), what);
    }
  });

  it('a ranged open of a missing blob is null; a range outside the blob is a RangeError', async (blobs, t) => {
    t.is(await blobs.open('never/was.mp3', { start: 0, end: 0 }), null);
    await blobs.put('short.mp3', Buffer.from('0123456789'), 'audio/mpeg');
    for (const range of [{ start: 0, end: 10 }, { start: 10, end: 10 }, { start: 5, end: 4 }, { start: -1, end: 3 }, { start: 0.5, end: 3 }]) {
      await t.throwsAsync(blobs.open('short.mp3', range), { instanceOf: RangeError }, JSON.stringify(range));
    }
    t.is((await content(blobs, 'short.mp3'))?.body, '0123456789', 'a refused range leaves the blob readable');
  });

  it('open reports a version that a put of the same key changes, even with the same bytes', async (blobs, t) => {
    await blobs.put('again.wav', Buffer.from('same bytes'), 'audio/wav');
    const first = await blobs.open('again.wav');
    first!.stream.destroy();
    const again = await blobs.open('again.wav', { start: 0, end: 3 });
    again!.stream.destroy();
    t.truthy(first!.info.version);
    t.is(again!.info.version, first!.info.version, 'a ranged open reports the version it reads');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await blobs.put('again.wav', Buffer.from('same bytes'), 'audio/wav');
    const second = await blobs.open('again.wav');
    second!.stream.destroy();
    t.not(second!.info.version, first!.info.version);
  });

  it('concurrent puts of one key leave exactly one complete version', async (blobs, t) => {
    const bodies = Array.from({ length: 8 }, (_, i) => `version ${i} `.repeat(1000));
    await Promise.all(bodies.map((b, i) => blobs.put('race.mp3', Buffer.from(b), `audio/v${i}`)));
    const found = await content(blobs, 'race.mp3');
    const index = bodies.indexOf(found?.body ?? '');
    t.true(index >= 0);
    t.is(found?.contentType, `audio/v${index}`);
    await t.notThrowsAsync(blobs.ping());
  });
}

blobsContract('directory', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'blobs-contract-'));
  return { blobs: createDirectoryBlobs(path.join(dir, 'store')), close: () => rm(dir, { recursive: true, force: true }) };
});

test('directory: a refused key writes nothing outside the store', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'blobs-contract-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const blobs = createDirectoryBlobs(path.join(dir, 'store'));
  await t.throwsAsync(blobs.put('../outside', Buffer.from('x'), 'text/plain'));
  await blobs.put('inside', Buffer.from('x'), 'text/plain');
  t.deepEqual(await readdir(dir), ['store']);
  t.deepEqual(await readdir(path.join(dir, 'store', 'tmp')), []);
});

test('directory: sweepOrphans removes tmp files a killed put left, once untouched long enough, and never a stored blob', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'blobs-contract-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const blobs = createDirectoryBlobs(path.join(dir, 'store'));
  t.is(await blobs.sweepOrphans!(new Date(), 100), 0, 'no tmp folder yet: nothing to do');
  await blobs.put('jobs/kept.wav', Buffer.from('a stored blob'), 'audio/wav');
  const tmp = path.join(dir, 'store', 'tmp');
  const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000);
  for (const name of ['dead-1', 'dead-2', 'dead-3']) {
    await writeFile(path.join(tmp, name), Buffer.alloc(1000));
    await utimes(path.join(tmp, name), hoursAgo(7), hoursAgo(7));
  }
  await writeFile(path.join(tmp, 'writing'), Buffer.alloc(1000));
  await utimes(path.join(dir, 'store', 'data', 'jobs', 'kept.wav'), hoursAgo(30), hoursAgo(30));
  t.is(await blobs.sweepOrphans!(hoursAgo(6), 2), 2, 'at most `limit` per call');
  t.is(await blobs.sweepOrphans!(hoursAgo(6), 2), 1);
  t.is(await blobs.sweepOrphans!(hoursAgo(6), 2), 0);
  t.deepEqual(await readdir(tmp), ['writing'], 'a tmp file written to recently is an upload in progress');
  t.is((await content(blobs, 'jobs/kept.wav'))?.body, 'a stored blob');
});

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  // ava wants tests declared synchronously; the driver connects on the first operation.
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  blobsContract('gridfs', async () => {
    const db = client.db(`contract_blobs_${randomUUID().slice(0, 8)}`);
    return { blobs: createGridFsBlobs(db, 'audio'), close: async () => void (await db.dropDatabase()) };
  });
  test('gridfs: a put whose stream fails part-way leaves no chunks behind (the upload is aborted)', async (t) => {
    const db = client.db(`contract_blobs_${randomUUID().slice(0, 8)}`);
    t.teardown(async () => void (await db.dropDatabase()));
    const blobs = createGridFsBlobs(db, 'audio');
    async function* failing() {
      for (let i = 0; i < 8; i++) yield Buffer.alloc(255 * 1024, i);
      throw new Error('the render died');
    }
    await t.throwsAsync(blobs.put('jobs/cut.wav.pcm.part', Readable.from(failing()), 'application/octet-stream'), { message: 'the render died' });
    t.is(await db.collection('audio.chunks').countDocuments(), 0);
    t.is(await db.collection('audio.files').countDocuments(), 0);
  });
  /** An ObjectId of the given time that no other one shares (createFromTime's are all zeros after the time). */
  const idAt = (ms: number) => new ObjectId(Math.floor(ms / 1000).toString(16).padStart(8, '0') + randomBytes(8).toString('hex'));
  const HOUR = 3600_000;
  /** Chunks written as a GridFS upload writes them, at the given times (ms), for files_id `filesId`. */
  async function chunksAt(db: Db, filesId: ObjectId, times: number[]): Promise<void> {
    await db.collection('audio.chunks').insertMany(times.map((at, n) => ({ _id: idAt(at), files_id: filesId, n, data: new Binary(Buffer.alloc(1024, n)) })));
  }
  async function chunkCount(db: Db, filesId: ObjectId): Promise<number> {
    return db.collection('audio.chunks').countDocuments({ files_id: filesId });
  }
  async function sweepDb(t: ExecutionContext): Promise<{ db: Db; blobs: Blobs }> {
    const db = client.db(`contract_blobs_${randomUUID().slice(0, 8)}`);
    t.teardown(async () => void (await db.dropDatabase()));
    return { db, blobs: createGridFsBlobs(db, 'audio') };
  }

  test('gridfs: sweepOrphans removes the chunks of an upload with no file document once its newest chunk is old enough', async (t) => {
    const { db, blobs } = await sweepDb(t);
    const now = Date.now();
    const orphan = idAt(now - 8 * HOUR);
    await chunksAt(db, orphan, [now - 8 * HOUR, now - 8 * HOUR + 1000, now - 7 * HOUR]);
    await blobs.put('jobs/fresh.wav', Buffer.from('a complete blob'), 'audio/wav');
    t.is(await blobs.sweepOrphans!(new Date(now - 7.5 * HOUR), 100), 0, 'its newest chunk is younger than the age asked for');
    t.is(await chunkCount(db, orphan), 3);
    t.is(await blobs.sweepOrphans!(new Date(now - 6 * HOUR), 100), 1);
    t.is(await chunkCount(db, orphan), 0);
    t.is((await content(blobs, 'jobs/fresh.wav'))?.body, 'a complete blob');
    t.is(await blobs.sweepOrphans!(new Date(now - 6 * HOUR), 100), 0, 'nothing left the second time');
  });

  test('gridfs: sweepOrphans keeps an old complete file, and an orphan whose newest chunk is recent however old its first', async (t) => {
    const { db, blobs } = await sweepDb(t);
    const now = Date.now();
    // A complete file written 30 hours ago: its file document names it, so its chunks stay whatever their age.
    const complete = idAt(now - 30 * HOUR);
    await chunksAt(db, complete, [now - 30 * HOUR, now - 30 * HOUR]);
    await db.collection('audio.files').insertOne({
      _id: complete, length: 2048, chunkSize: 1024, uploadDate: new Date(now - 30 * HOUR), filename: 'books/b1/old.mp3', metadata: { contentType: 'audio/mpeg' },
    });
    // An upload opened 10 hours ago that wrote its last chunk a minute ago: still in progress.
    const slow = idAt(now - 10 * HOUR);
    await chunksAt(db, slow, [now - 10 * HOUR, now - 9 * HOUR, now - 60_000]);
    // An upload opened a minute ago: nothing about it is old.
    const young = idAt(now - 60_000);
    await chunksAt(db, young, [now - 60_000]);
    t.is(await blobs.sweepOrphans!(new Date(now - 6 * HOUR), 100), 0);
    t.is(await chunkCount(db, complete), 2);
    t.is(await chunkCount(db, slow), 3);
    t.is(await chunkCount(db, young), 1);
    const old = await content(blobs, 'books/b1/old.mp3');
    t.is(old?.size, 2048);
    t.is(old?.body.length, 2048);
  });

  test('gridfs: sweepOrphans removes at most `limit` uploads per call', async (t) => {
    const { db, blobs } = await sweepDb(t);
    const now = Date.now();
    const orphans = Array.from({ length: 5 }, (_, i) => idAt(now - (20 + i) * HOUR));
    for (const id of orphans) await chunksAt(db, id, [id.getTimestamp().getTime(), id.getTimestamp().getTime() + 1000]);
    const cutoff = new Date(now - 6 * HOUR);
    t.is(await blobs.sweepOrphans!(cutoff, 2), 2);
    t.is(await db.collection('audio.chunks').countDocuments(), 6);
    t.is(await blobs.sweepOrphans!(cutoff, 2), 2);
    t.is(await blobs.sweepOrphans!(cutoff, 2), 1);
    t.is(await blobs.sweepOrphans!(cutoff, 2), 0);
    t.is(await db.collection('audio.chunks').countDocuments(), 0);
  });

  test('gridfs: an upload its process dropped mid-stream (the driver\'s own ids) is swept once old enough, not before', async (t) => {
    const { db, blobs } = await sweepDb(t);
    await blobs.put('jobs/done.wav', Buffer.alloc(600 * 1024, 1), 'audio/wav');
    // What a SIGKILL leaves: chunks written, no end, no abort.
    const upload = new GridFSBucket(db, { bucketName: 'audio' }).openUploadStream('jobs/killed.wav.pcm.part');
    await new Promise<void>((resolve, reject) => upload.write(Buffer.alloc(3 * 255 * 1024, 2), (err) => (err ? reject(err) : resolve())));
    for (let waited = 0; (await chunkCount(db, upload.id as ObjectId)) < 3 && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    t.is(await chunkCount(db, upload.id as ObjectId), 3);
    t.is(await blobs.sweepOrphans!(new Date(Date.now() - 6 * HOUR), 100), 0, 'an upload of this minute is one in progress');
    t.is(await chunkCount(db, upload.id as ObjectId), 3);
    // Six hours later, as the sweep sees it.
    t.is(await blobs.sweepOrphans!(new Date(Date.now() + 2000), 100), 1);
    t.is(await chunkCount(db, upload.id as ObjectId), 0);
    const done = await blobs.open('jobs/done.wav');
    t.is((await readAll(done!.stream)).length, 600 * 1024, 'the complete blob is whole');
  });
} else {
  console.log('blobs contract: GridFS adapter skipped, MONGODB_URL is not set');
}
