/**
 * POST /tts jobs between tenants and over damaged storage: the content cache
 * answers only its own account, a damaged stored file is never served or
 * charged as a cache hit, a download of one answers in the envelope and
 * refunds its job, and a job that produced no audio is refunded.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { TOPICS } from '../../core/ports/bus.ts';
import type { JobRecord } from '../../core/ports/jobs.ts';
import { coreServices } from '../../core/services.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform();
});
test.after.always(async () => {
  await p?.stop();
});

async function submit(key: string, text: string) {
  const res = await p.api('/tts', { method: 'POST', key, json: { text } });
  return { status: res.status, body: await res.json() };
}

async function finished(key: string, jobId: string) {
  return waitFor(async () => {
    const job = await (await p.api(`/tts/${jobId}`, { key })).json();
    return job.status === 'completed' || job.status === 'failed' ? job : null;
  }, { timeoutMs: 30_000, what: `job ${jobId}` });
}

const balance = async (key: string) => (await (await p.api('/balance', { key })).json()).totalRemainingTokens as number;
/** Where the embedded blobs adapter keeps a job's WAV. */
const blobFile = (jobId: string) => path.join(p.dataDir, 'blobs', 'data', 'jobs', `${jobId}.wav`);

test('the content cache is scoped to the account: B submitting A\'s text is rendered for B, never answered with A\'s job', async (t) => {
  const a = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const b = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const text = `Chỉ người gửi mới biết mình đã đọc câu này, mã ${randomUUID().slice(0, 8)}.`;
  const first = await submit(a.apiKey, text);
  await finished(a.apiKey, first.body.jobId);

  const other = await submit(b.apiKey, text);
  t.is(other.status, 201);
  t.is(other.body.status, 'queued', 'no instant completion tells B that A rendered this text');
  t.is(other.body.audioUrl, undefined);
  const done = await finished(b.apiKey, other.body.jobId);
  t.is(done.status, 'completed');
  t.false(done.audioUrl.includes(first.body.jobId), 'B\'s link names no job of A');
  t.true(done.audioUrl.includes(other.body.jobId));

  const again = await submit(a.apiKey, text);
  t.is(again.body.status, 'completed', 'A\'s own resubmission is still a cache hit');
});

test('a damaged cached file is not served as a cache hit: the resubmission renders afresh', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const text = `Tệp âm thanh hỏng không bao giờ được trả lại, mã ${randomUUID().slice(0, 8)}.`;
  const first = await submit(acct.apiKey, text);
  await finished(acct.apiKey, first.body.jobId);
  const file = blobFile(first.body.jobId);
  const bytes = await readFile(file);
  // keep the blob's own header line, break the RIFF header behind it
  const headerEnd = bytes.indexOf('\n') + 1;
  bytes.write('JUNK', headerEnd, 'latin1');
  await writeFile(file, bytes);

  const second = await submit(acct.apiKey, text);
  t.is(second.status, 201);
  t.is(second.body.status, 'queued');
  const done = await finished(acct.apiKey, second.body.jobId);
  t.is(done.status, 'completed');
  const audio = await fetch(done.audioUrl);
  t.is(audio.status, 200);
  t.is(Buffer.from(await audio.arrayBuffer()).subarray(0, 4).toString('latin1'), 'RIFF');
});

for (const [what, damage] of [
  ['a truncated WAV', (bytes: Buffer) => bytes.subarray(0, bytes.length - 1001)],
  ['an unreadable blob header line', (bytes: Buffer) => Buffer.concat([Buffer.from('{"contentType":'), bytes.subarray(bytes.indexOf('\n'))])],
  ['a blob with no header line at all', () => Buffer.alloc(5000, 0x41)],
] as const) {
  test(`downloading ${what} answers 410 AUDIO_DAMAGED in the native envelope and refunds the job`, async (t) => {
    const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
    const { body } = await submit(acct.apiKey, `Một tệp bị hỏng trong kho lưu trữ, mã ${randomUUID().slice(0, 8)}.`);
    const job = await finished(acct.apiKey, body.jobId);
    const charged = await balance(acct.apiKey);
    t.true(charged < 10_000);
    await writeFile(blobFile(body.jobId), damage(await readFile(blobFile(body.jobId))));

    const res = await fetch(job.audioUrl);
    t.is(res.status, 410);
    const error = await res.json();
    t.like(error, { statusCode: 410, code: 'AUDIO_DAMAGED' });
    t.truthy(error.traceId);
    t.is(await balance(acct.apiKey), 10_000, 'the job that paid for the damaged file is refunded');
    const again = await fetch(job.audioUrl);
    t.is(again.status, 410, 'the damaged file is gone, and its link still says why');
    t.notRegex((await again.json()).message, /refunded/, 'a second download refunds nothing more');
    t.is(await balance(acct.apiKey), 10_000);
  });
}

test('a damaged file reached through a cache hit\'s link refunds the cache hit\'s job, whose caller is told so, and the job that rendered it; a link whose job was changed is refused', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const text = `Tệp của lần đọc đầu tiên hỏng sau khi đã được dùng lại, mã ${randomUUID().slice(0, 8)}.`;
  const first = await submit(acct.apiKey, text);
  const rendered = await finished(acct.apiKey, first.body.jobId);
  const price = 10_000 - (await balance(acct.apiKey));
  const hit = await submit(acct.apiKey, text);
  t.is(hit.body.status, 'completed', 'a cache hit, charged');
  t.is(await balance(acct.apiKey), 10_000 - 2 * price);
  const link = new URL(hit.body.audioUrl);
  t.true(link.pathname.endsWith(`/jobs/${first.body.jobId}.wav`), 'the file is the rendering job\'s');
  t.is(link.searchParams.get('job'), hit.body.jobId, 'the link names the job it was handed out for');
  const forged = new URL(link);
  forged.searchParams.set('job', first.body.jobId);
  t.is((await fetch(forged)).status, 403);

  const file = blobFile(first.body.jobId);
  await writeFile(file, (await readFile(file)).subarray(0, -1001));
  const res = await fetch(link);
  t.is(res.status, 410);
  t.regex((await res.json()).message, /its tokens were refunded/);
  t.is(await balance(acct.apiKey), 10_000, 'both jobs that paid for the file are refunded, once each');
  t.is((await fetch(rendered.audioUrl)).status, 410);
  t.is(await balance(acct.apiKey), 10_000);
});

test('SPEC billing rule 3: every job that paid for a file found damaged is refunded, however many cache hits shared it and whichever link comes first', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const text = `Ba lần đọc dùng chung một tệp, rồi tệp hỏng, mã ${randomUUID().slice(0, 8)}.`;
  const first = await submit(acct.apiKey, text);
  await finished(acct.apiKey, first.body.jobId);
  const price = 10_000 - (await balance(acct.apiKey));
  const second = await submit(acct.apiKey, text);
  const third = await submit(acct.apiKey, text);
  t.is(await balance(acct.apiKey), 10_000 - 3 * price, 'a render and two cache hits, each charged');
  const file = blobFile(first.body.jobId);
  await writeFile(file, (await readFile(file)).subarray(0, -1001));

  const viaThird = await fetch(third.body.audioUrl);
  t.is(viaThird.status, 410);
  t.is(await balance(acct.apiKey), 10_000 - price, 'the third job and the render are refunded');
  const viaSecond = await fetch(second.body.audioUrl);
  t.is(viaSecond.status, 410, 'the file was removed as damaged: still 410, not a 404 that keeps the tokens');
  t.like(await viaSecond.json(), { code: 'AUDIO_DAMAGED' });
  t.is(await balance(acct.apiKey), 10_000, 'the second cache hit is refunded too');
  t.is((await fetch(second.body.audioUrl)).status, 410);
  t.is(await balance(acct.apiKey), 10_000, 'once');
});

test('SPEC billing rule 3: the inference worker refunds a queued job that produces no audio', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const [billing, jobs, bus] = await Promise.all([
    p.platform.service(coreServices.billing), p.platform.service(coreServices.jobs), p.platform.service(coreServices.bus),
  ]);
  // A job accepted before the API refused such text (or by any other path): nothing in it can be spoken.
  const charge = await billing.charge({ payer: { accountId: acct.accountId, keyId: acct.keyId, grantId: acct.grantId }, engine: 'v4', tokens: 195, route: 'tts', requestId: null });
  const now = new Date().toISOString();
  const job: JobRecord = {
    id: `job_${randomUUID()}`, accountId: acct.accountId, keyId: acct.keyId, status: 'queued', source: 'tts', text: '[music] … \u200B',
    voiceId: 'vi-north-female-mai', voiceName: 'Mai', engine: 'v4', emotion: 'natural', speed: 1, aiRefine: false, textLength: 12,
    cacheKey: randomUUID(), charge, audioKey: null, durationSeconds: null, processingMs: null, attempts: 0, leaseOwner: null, leaseUntil: null,
    errorCode: null, error: null, refunded: false, createdAt: now, startedAt: null, completedAt: null,
  };
  await jobs.create(job);
  t.is(await balance(acct.apiKey), 10_000 - 195);
  await bus.publish(TOPICS.jobs, [{ id: job.id, key: job.id, value: { jobId: job.id } }]);

  const done = await finished(acct.apiKey, job.id);
  t.is(done.status, 'failed');
  t.regex(done.error, /nothing that can be spoken/);
  await waitFor(async () => (await balance(acct.apiKey)) === 10_000, { what: 'the refund' });
  t.true((await jobs.get(job.id))!.refunded);
});
