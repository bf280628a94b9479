import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { MongoClient } from 'mongodb';
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

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  // ava wants tests declared synchronously; the driver connects on the first operation.
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  blobsContract('gridfs', async () => {
    const db = client.db(`contract_blobs_${randomUUID().slice(0, 8)}`);
    return { blobs: createGridFsBlobs(db, 'audio'), close: async () => void (await db.dropDatabase()) };
  });
} else {
  console.log('blobs contract: GridFS adapter skipped, MONGODB_URL is not set');
}
