/**
 * Byte ranges on presigned downloads (`GET /files/<key>`, RFC 9110 §14): a
 * job's audio is rendered once through POST /tts and then downloaded whole
 * and in parts through its audioUrl, so the parts are compared with the
 * whole file's bytes.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { coreServices } from '../../core/services.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform();
});
test.after.always(async () => {
  await p?.stop();
});

interface Rendered {
  jobId: string;
  audioUrl: string;
  /** the whole file, as a download without Range gets it */
  whole: Buffer;
}

/** A completed job of its own (tests damage and rewrite files) and its whole download. */
async function rendered(): Promise<Rendered> {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const res = await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: `Tải về từng đoạn của một tệp âm thanh dài, mã ${randomUUID().slice(0, 8)}.` } });
  const { jobId } = await res.json();
  const job = await waitFor(async () => {
    const body = await (await p.api(`/tts/${jobId}`, { key: acct.apiKey })).json();
    return body.status === 'completed' || body.status === 'failed' ? body : null;
  }, { timeoutMs: 30_000, what: `job ${jobId}` });
  if (job.status !== 'completed') throw new Error(`job ${jobId} failed: ${job.error}`);
  const whole = Buffer.from(await (await fetch(job.audioUrl)).arrayBuffer());
  return { jobId, audioUrl: job.audioUrl, whole };
}

let shared: Promise<Rendered> | undefined;
/** One rendered job shared by the tests that only read it. */
const audio = () => (shared ??= rendered());

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());
/** Where the embedded blobs adapter keeps a job's WAV. */
const blobFile = (jobId: string) => path.join(p.dataDir, 'blobs', 'data', 'jobs', `${jobId}.wav`);

test('a download without Range is 200 with the whole file, Accept-Ranges: bytes and a quoted ETag', async (t) => {
  const { audioUrl, whole } = await audio();
  t.true(whole.length > 1000, 'a WAV long enough to cut into parts');
  const res = await get(audioUrl);
  t.is(res.status, 200);
  t.is(res.headers.get('accept-ranges'), 'bytes');
  t.regex(res.headers.get('etag') ?? '', /^"[^"]+"$/);
  t.is(res.headers.get('content-length'), String(whole.length));
  t.is(res.headers.get('content-range'), null);
  t.true((await bytesOf(res)).equals(whole));
});

for (const [rule, range, first, last] of [
  ['Range: bytes=a-b is 206 with exactly bytes a to b', 'bytes=100-199', 100, 199],
  ['Range: bytes=a-a is 206 with that one byte', 'bytes=7-7', 7, 7],
  ['Range: bytes=a- is 206 from byte a to the end', 'bytes=500-', 500, -1],
  ['Range: bytes=0- is 206 with the whole file', 'bytes=0-', 0, -1],
  ['Range: bytes=-n is 206 with the last n bytes', 'bytes=-300', -300, -1],
  ['a Range whose last-pos is past the end is 206 up to the last byte', 'bytes=40-999999999999', 40, -1],
  ['a Range suffix longer than the file is 206 with the whole file', 'bytes=-999999999999', 0, -1],
  ['a Range unit in another case (Bytes=) is still bytes: 206', 'Bytes=0-9', 0, 9],
] as const) {
  test(`${rule}, its Content-Range naming the span and the whole size`, async (t) => {
    const { audioUrl, whole } = await audio();
    const size = whole.length;
    const start = first < 0 ? Math.max(0, size + first) : first;
    const end = last < 0 ? size - 1 : last;
    const res = await get(audioUrl, { Range: range });
    t.is(res.status, 206);
    t.is(res.headers.get('content-range'), `bytes ${start}-${end}/${size}`);
    t.is(res.headers.get('content-length'), String(end - start + 1));
    t.is(res.headers.get('accept-ranges'), 'bytes');
    t.is(res.headers.get('content-type'), 'audio/wav');
    t.true((await bytesOf(res)).equals(whole.subarray(start, end + 1)));
  });
}

test('a seek sequence of adjacent ranges rebuilds the whole file (a resumed download)', async (t) => {
  const { audioUrl, whole } = await audio();
  const parts: Buffer[] = [];
  const step = Math.ceil(whole.length / 3);
  for (let start = 0; start < whole.length; start += step) {
    const res = await get(audioUrl, { Range: `bytes=${start}-${start + step - 1}` });
    t.is(res.status, 206);
    parts.push(await bytesOf(res));
  }
  t.true(Buffer.concat(parts).equals(whole));
});

for (const [rule, range] of [
  ['a first-pos at the size', 'size'],
  ['a first-pos past the size', 'size+5'],
  ['a suffix of zero bytes', 'bytes=-0'],
] as const) {
  test(`Range with ${rule} is 416 RANGE_NOT_SATISFIABLE in the native envelope, Content-Range bytes */size`, async (t) => {
    const { audioUrl, whole } = await audio();
    const size = whole.length;
    const header = range === 'size' ? `bytes=${size}-` : range === 'size+5' ? `bytes=${size + 5}-${size + 10}` : range;
    const res = await get(audioUrl, { Range: header });
    t.is(res.status, 416);
    t.is(res.headers.get('content-range'), `bytes */${size}`);
    t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = await res.json();
    t.like(body, { statusCode: 416, error: 'Range Not Satisfiable', code: 'RANGE_NOT_SATISFIABLE' });
    t.true(String(body.message).includes(`${size} bytes`), 'the message says how long the file is');
    t.truthy(body.traceId);
  });
}

for (const [rule, range] of [
  ['several ranges', 'bytes=0-1,5-6'],
  ['several ranges, one of them a suffix', 'bytes=-5, 0-1'],
  ['another unit', 'items=0-1'],
  ['no unit', '0-99'],
  ['a last-pos before the first-pos', 'bytes=50-10'],
  ['an empty range', 'bytes=-'],
  ['not numbers', 'bytes=a-b'],
  ['a negative first-pos', 'bytes=-5-10'],
  ['garbage', 'garbage'],
] as const) {
  test(`Range with ${rule} is ignored: 200, the whole file, no Content-Range`, async (t) => {
    const { audioUrl, whole } = await audio();
    const res = await get(audioUrl, { Range: range });
    t.is(res.status, 200);
    t.is(res.headers.get('accept-ranges'), 'bytes', 'ranges are still offered');
    t.is(res.headers.get('content-range'), null);
    t.is(res.headers.get('content-length'), String(whole.length));
    t.true((await bytesOf(res)).equals(whole));
  });
}

test('If-Range with the current ETag gets the range; another ETag, a weak one or a date gets the whole file with 200', async (t) => {
  const { audioUrl, whole } = await audio();
  const etag = (await get(audioUrl, { Range: 'bytes=0-0' })).headers.get('etag')!;
  t.truthy(etag);
  const matching = await get(audioUrl, { Range: 'bytes=10-19', 'If-Range': etag });
  t.is(matching.status, 206);
  t.true((await bytesOf(matching)).equals(whole.subarray(10, 20)));
  for (const other of ['"not-this-version"', `W/${etag}`, new Date().toUTCString()]) {
    const res = await get(audioUrl, { Range: 'bytes=10-19', 'If-Range': other });
    t.is(res.status, 200, other);
    t.is(res.headers.get('content-range'), null, other);
    t.true((await bytesOf(res)).equals(whole), other);
  }
});

test('writing the key again changes its ETag, so a resume against the old version gets the new file whole', async (t) => {
  const { jobId, audioUrl, whole } = await rendered();
  const before = (await get(audioUrl)).headers.get('etag')!;
  const blobs = await p.platform.service(coreServices.blobs);
  await new Promise((resolve) => setTimeout(resolve, 5));
  await blobs.put(`jobs/${jobId}.wav`, whole, 'audio/wav');
  const res = await get(audioUrl, { Range: 'bytes=100-', 'If-Range': before });
  t.is(res.status, 200);
  t.not(res.headers.get('etag'), before, 'same bytes, another version');
  t.true((await bytesOf(res)).equals(whole));
  const fresh = await get(audioUrl, { Range: 'bytes=100-', 'If-Range': res.headers.get('etag')! });
  t.is(fresh.status, 206);
  t.true((await bytesOf(fresh)).equals(whole.subarray(100)));
});

test('HEAD sends the whole file\'s headers and no body, with or without Range (range handling is for GET only)', async (t) => {
  const { audioUrl, whole } = await audio();
  const full = await get(audioUrl);
  await full.arrayBuffer();
  const asked: Array<Record<string, string>> = [{}, { Range: 'bytes=0-9' }, { Range: 'bytes=999999999-' }];
  for (const headers of asked) {
    const res = await fetch(audioUrl, { method: 'HEAD', headers });
    const what = JSON.stringify(headers);
    t.is(res.status, 200, what);
    t.is(res.headers.get('accept-ranges'), 'bytes', what);
    t.is(res.headers.get('content-length'), String(whole.length), what);
    t.is(res.headers.get('content-type'), 'audio/wav', what);
    t.is(res.headers.get('etag'), full.headers.get('etag'), what);
    t.is(res.headers.get('content-range'), null, what);
    t.is((await bytesOf(res)).length, 0, what);
  }
});

test('the link is checked before the range: a bad signature or expiry with a Range is 403 LINK_EXPIRED, the good link 206', async (t) => {
  const { audioUrl } = await audio();
  const forged = new URL(audioUrl);
  const signature = forged.searchParams.get('signature')!;
  forged.searchParams.set('signature', (signature[0] === '0' ? '1' : '0') + signature.slice(1));
  const expired = new URL(audioUrl);
  expired.searchParams.set('expires', '1000000000');
  for (const [what, url] of [['a bad signature', forged], ['an expiry in the past', expired]] as const) {
    for (const range of ['bytes=0-9', 'bytes=999999999-']) {
      const res = await get(url.toString(), { Range: range });
      t.is(res.status, 403, `${what}, ${range}`);
      t.like(await res.json(), { statusCode: 403, code: 'LINK_EXPIRED' }, `${what}, ${range}`);
      t.is(res.headers.get('content-range'), null);
    }
  }
  t.is((await get(audioUrl, { Range: 'bytes=0-9' })).status, 206);
});

test('the damage check comes before the range: a ranged download of a damaged file is 410 AUDIO_DAMAGED, not 206 or 416', async (t) => {
  const { jobId, audioUrl } = await rendered();
  t.is((await get(audioUrl, { Range: 'bytes=0-9' })).status, 206, 'intact, the range is served');
  const file = blobFile(jobId);
  await writeFile(file, (await readFile(file)).subarray(0, -1001));
  const res = await get(audioUrl, { Range: 'bytes=999999999-' });
  t.is(res.status, 410);
  t.like(await res.json(), { statusCode: 410, code: 'AUDIO_DAMAGED' });
  t.is((await get(audioUrl, { Range: 'bytes=0-9' })).status, 410, 'the damaged file was removed; its link still says why');
});
