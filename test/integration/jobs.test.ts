import test from 'ava';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { coreServices } from '../../core/services.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({ USER_QUEUE_MAX: '30' });
});
test.after.always(async () => {
  await p?.stop();
});

const TEXT = 'Xin chào các bạn, hôm nay chúng ta cùng nghe thử giọng đọc tiếng Việt.';

async function submit(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await p.api('/tts', { method: 'POST', key, json: body, headers });
  return { res, body: await res.json() };
}

async function waitForJob(key: string, jobId: string) {
  return waitFor(async () => {
    const job = await (await p.api(`/tts/${jobId}`, { key })).json();
    return job.status === 'completed' || job.status === 'failed' ? job : null;
  }, { timeoutMs: 30_000, what: `job ${jobId}` });
}

test('POST /tts queues a job, charges up front, and the job completes with a 24 h WAV link', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const { res, body } = await submit(acct.apiKey, { text: TEXT, voiceId: 'vi-south-female-lan' });
  t.is(res.status, 201);
  t.is(body.status, 'queued');
  t.regex(body.jobId, /^job_/);
  const balance = await (await p.api('/balance', { key: acct.apiKey })).json();
  t.is(balance.totalRemainingTokens, 10_000 - 195 * 1 - (TEXT.length > 50 ? Math.ceil(TEXT.normalize('NFC').length * 3.9) - 195 : 0));
  const job = await waitForJob(acct.apiKey, body.jobId);
  t.is(job.status, 'completed');
  t.is(job.audioUrlExpiresIn, 86400);
  t.true(job.duration > 1);
  t.is(job.voiceId, 'vi-south-female-lan');
  t.is(job.textLength, [...TEXT.normalize('NFC')].length);
  const audio = await fetch(job.audioUrl);
  t.is(audio.status, 200);
  t.is(audio.headers.get('content-type'), 'audio/wav');
  const bytes = Buffer.from(await audio.arrayBuffer());
  t.is(bytes.subarray(0, 4).toString(), 'RIFF');
});

test('the same text, voice, speed, emotion and engine is a cache hit: completed at once, charged', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const text = 'Bộ nhớ đệm giúp trả lời ngay lập tức khi cùng một đoạn văn được gửi lại.';
  const first = await submit(acct.apiKey, { text });
  await waitForJob(acct.apiKey, first.body.jobId);
  const before = (await (await p.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens;
  const second = await submit(acct.apiKey, { text });
  t.is(second.res.status, 201);
  t.is(second.body.status, 'completed');
  t.is(second.body.audioUrlExpiresIn, 86400);
  t.true(second.body.duration > 0);
  t.truthy(second.body.audioUrl);
  const after = (await (await p.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens;
  t.true(after < before, 'a cache hit is charged');
  const other = await submit(acct.apiKey, { text, speed: 1.2 });
  t.is(other.body.status, 'queued', 'another speed is another audio');
});

test('aiRefine prepares the text otherwise (formulas read out), so a request with it and one without are never each other\'s cache hit', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const text = 'Công thức H2O và CO2, còn x^2 + y^2 = z^2 là định lý Pytago nhé.';
  const plain = await submit(acct.apiKey, { text });
  await waitForJob(acct.apiKey, plain.body.jobId);
  const refined = await submit(acct.apiKey, { text, aiRefine: true });
  t.is(refined.body.status, 'queued', 'the plain audio is not served for a refined request (which pays the surcharge)');
  const refinedJob = await waitForJob(acct.apiKey, refined.body.jobId);
  const again = await submit(acct.apiKey, { text, aiRefine: true });
  t.is(again.body.status, 'completed', 'the refined audio is its own cache entry');
  t.is(again.body.duration, refinedJob.duration);
  const plainAgain = await submit(acct.apiKey, { text });
  t.is(plainAgain.body.status, 'completed');
  t.is(plainAgain.body.duration, (await waitForJob(acct.apiKey, plain.body.jobId)).duration, 'a plain request gets the plain audio');
});

test('Idempotency-Key: replay returns the original job with Idempotent-Replayed and no second charge', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const key = 'order-12345-abc';
  const body = { text: 'Một yêu cầu chỉ được tính tiền một lần dù gửi lại nhiều lần.' };
  const first = await submit(acct.apiKey, body, { 'Idempotency-Key': key });
  t.is(first.res.status, 201);
  t.is(first.res.headers.get('idempotency-key'), key);
  const before = (await (await p.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens;
  const replay = await submit(acct.apiKey, body, { 'Idempotency-Key': key });
  t.is(replay.res.status, 201);
  t.is(replay.res.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.jobId, first.body.jobId);
  t.is(replay.body.status, 'queued');
  t.is((await (await p.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens, before);
  const reused = await submit(acct.apiKey, { text: 'Một nội dung hoàn toàn khác với lần trước đó nhé.' }, { 'Idempotency-Key': key });
  t.is(reused.res.status, 422);
  t.is(reused.body.code, 'IDEMPOTENCY_KEY_REUSED');
});

test('Idempotency-Key: a replayed cache hit carries a link signed again, its audioUrlExpiresIn true (SPEC: seconds until the URL expires)', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const text = 'Một đường dẫn được ký lại mỗi khi câu trả lời được phát lại.';
  await waitForJob(acct.apiKey, (await submit(acct.apiKey, { text })).body.jobId);
  const key = 'cache-hit-replay-01';
  const hit = await submit(acct.apiKey, { text }, { 'Idempotency-Key': key });
  t.is(hit.body.status, 'completed');
  const expiresOf = (url: string) => Number(new URL(url).searchParams.get('expires'));
  t.true(expiresOf(hit.body.audioUrl) > 0, hit.body.audioUrl);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const replay = await submit(acct.apiKey, { text }, { 'Idempotency-Key': key });
  t.is(replay.res.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.jobId, hit.body.jobId);
  t.true(expiresOf(replay.body.audioUrl) > expiresOf(hit.body.audioUrl), 'the replay\'s link is signed at the replay');
  t.is(replay.body.audioUrlExpiresIn, 86400);
  t.is((await fetch(replay.body.audioUrl)).status, 200);
});

test('Idempotency-Key is scoped to the API key', async (t) => {
  const a = await p.bootstrap();
  const b = await p.bootstrap();
  const body = { text: 'Khóa chống lặp chỉ có hiệu lực trong phạm vi một khóa API mà thôi.' };
  const first = await submit(a.apiKey, body, { 'Idempotency-Key': 'shared-key-1' });
  const second = await submit(b.apiKey, body, { 'Idempotency-Key': 'shared-key-1' });
  t.not(first.body.jobId, second.body.jobId);
  t.is(second.res.headers.get('idempotent-replayed'), null);
});

// An empty header is a key that came out empty in the client, not a request without one: refused, never run unprotected.
for (const bad of ['short', 'has space inside', 'x'.repeat(129), 'tab\tinside1', '', '   ']) {
  test(`IDEMPOTENCY_KEY_INVALID (400) for ${JSON.stringify(bad.slice(0, 20))}`, async (t) => {
    const acct = await p.bootstrap();
    const { res, body } = await submit(acct.apiKey, { text: TEXT }, { 'Idempotency-Key': bad });
    t.is(res.status, 400);
    t.is(body.code, 'IDEMPOTENCY_KEY_INVALID');
  });
}

test('IDEMPOTENCY_IN_FLIGHT (409) while the first call is still running', async (t) => {
  const acct = await p.bootstrap();
  const store = (await p.platform.service(coreServices.counters)).idempotency;
  const body = { text: TEXT };
  const { fingerprint } = await import('../../core/http/idempotency.ts');
  await store.begin(`idem:${acct.keyId}:inflight-key-1`, fingerprint(body), 60);
  const { res, body: out } = await submit(acct.apiKey, body, { 'Idempotency-Key': 'inflight-key-1' });
  t.is(res.status, 409);
  t.is(out.code, 'IDEMPOTENCY_IN_FLIGHT');
  t.is(res.headers.get('retry-after'), '1');
});

test('Idempotency-Key: a job accepted whose answer was never recorded is replayed from the job, not refused as in flight for a day', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const store = (await p.platform.service(coreServices.counters)).idempotency;
  const body = { text: 'Câu trả lời của yêu cầu này không được ghi lại vì kho đếm gặp lỗi.' };
  // The counters store fails after the accept, as when the process dies between the two writes.
  const complete = store.complete;
  store.complete = async () => {
    throw new Error('counters store lost');
  };
  let first;
  try {
    first = await submit(acct.apiKey, body, { 'Idempotency-Key': 'unrecorded-key-1' });
  } finally {
    store.complete = complete;
  }
  t.is(first.res.status, 201);
  const balance = async () => (await (await p.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens;
  const before = await balance();
  const retry = await submit(acct.apiKey, body, { 'Idempotency-Key': 'unrecorded-key-1' });
  t.is(retry.res.status, 201);
  t.is(retry.res.headers.get('idempotent-replayed'), 'true');
  t.is(retry.body.jobId, first.body.jobId);
  t.is(await balance(), before, 'no second charge');
  const other = await submit(acct.apiKey, { text: 'Một thân bài khác dưới cùng khoá.' }, { 'Idempotency-Key': 'unrecorded-key-1' });
  t.is(other.res.status, 422);
  t.is(other.body.code, 'IDEMPOTENCY_KEY_REUSED');
});

test('GET /tts/{jobId}: another account’s job is 404', async (t) => {
  const a = await p.bootstrap();
  const b = await p.bootstrap();
  const { body } = await submit(a.apiKey, { text: TEXT });
  t.is((await p.api(`/tts/${body.jobId}`, { key: b.apiKey })).status, 404);
  t.is((await p.api('/tts/job_nope', { key: a.apiKey })).status, 404);
});

test('GET /tts?ids= polls up to 50 jobs; unknown or foreign ids are listed in missing', async (t) => {
  const a = await p.bootstrap();
  const b = await p.bootstrap();
  const mine = await submit(a.apiKey, { text: TEXT + ' Một.' });
  const theirs = await submit(b.apiKey, { text: TEXT + ' Hai.' });
  const res = await p.api(`/tts?ids=${mine.body.jobId},${theirs.body.jobId},job_unknown`, { key: a.apiKey });
  t.is(res.status, 200);
  const body = await res.json();
  t.deepEqual(body.jobs.map((j: any) => j.jobId), [mine.body.jobId]);
  t.deepEqual(body.missing.sort(), [theirs.body.jobId, 'job_unknown'].sort());
  const tooMany = Array.from({ length: 51 }, (_, i) => `job_${i}`).join(',');
  t.is((await p.api(`/tts?ids=${tooMany}`, { key: a.apiKey })).status, 400);
});

test('a queued job reports queuePosition and estimatedWaitSeconds', async (t) => {
  const acct = await p.bootstrap();
  const texts = Array.from({ length: 6 }, (_, i) => `Đây là công việc số ${i + 1} trong hàng đợi, hãy kiên nhẫn chờ nhé các bạn.`);
  const jobs = [];
  for (const text of texts) jobs.push((await submit(acct.apiKey, { text })).body.jobId);
  const last = await (await p.api(`/tts/${jobs[jobs.length - 1]}`, { key: acct.apiKey })).json();
  if (last.status === 'queued') {
    t.true(last.queuePosition >= 1);
    t.true(last.estimatedWaitSeconds >= 1);
  } else {
    t.pass('the worker drained the queue before the poll; positions are covered by the jobs store contract');
  }
});

const VALIDATION: Array<[string, Record<string, unknown>, RegExp]> = [
  ['text is required', {}, /text is required/],
  ['text over 50000 characters', { text: 'a '.repeat(25_001) }, /at most 50000/],
  ['speed is strict 0.5 to 2.0', { text: TEXT, speed: 2.5 }, /speed must be less than or equal to 2/],
  ['unknown emotion', { text: TEXT, emotion: 'angry' }, /emotion must be one of/],
  ['unknown voice', { text: TEXT, voiceId: 'v3-voice-old' }, /Unknown voice/],
  ['retired engine', { text: TEXT, engine: 'v3' }, /retired on 2026-09-24/],
  ['unsupported language', { text: 'Привет как дела сегодня хорошо' }, /^Text appears to be in an unsupported language/],
  ['unreadable words', { text: 'x'.repeat(40) }, /^Text does not look like readable words/],
  ['foreign clone', { text: TEXT, voiceId: 'clone_00000000-0000-0000-0000-000000000000' }, /not found among your voices/],
];

for (const [rule, body, message] of VALIDATION) {
  test(`POST /tts 400 before billing: ${rule}`, async (t) => {
    const acct = await p.bootstrap({ grant: { totalTokens: 5000 } });
    const { res, body: out } = await submit(acct.apiKey, body);
    t.is(res.status, 400);
    t.is(out.statusCode, 400);
    t.regex(JSON.stringify(out.message), new RegExp(message.source.replace(/^\^/, '')));
    t.is((await (await p.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens, 5000);
  });
}

test('validation failures list one message per rejected field', async (t) => {
  const acct = await p.bootstrap();
  const { body } = await submit(acct.apiKey, { speed: 9, emotion: 'x' });
  t.true(Array.isArray(body.message));
  t.is(body.message.length, 3);
});

test('a test key caps each request at 100 words (400 on longer text)', async (t) => {
  const acct = await p.bootstrap({ kind: 'test' });
  const ok = await submit(acct.apiKey, { text: Array.from({ length: 100 }, () => 'chào').join(' ') });
  t.is(ok.res.status, 201);
  const long = await submit(acct.apiKey, { text: Array.from({ length: 101 }, () => 'chào').join(' ') });
  t.is(long.res.status, 400);
  t.regex(long.body.message, /100 words/);
});

test('an own clone is an ordinary voiceId; a clone whose reference is gone is 400; a v3 clone is CLONE_ENGINE_RETIRED', async (t) => {
  const acct = await p.bootstrap();
  const clone = await (await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Tôi', baseVoiceId: 'vi-north-male-minh' } })).json();
  t.is((await submit(acct.apiKey, { text: TEXT, voiceId: clone.id })).res.status, 201);
  const gone = await (await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Mất', baseVoiceId: 'vi-north-male-minh', referenceAvailable: false } })).json();
  const goneRes = await submit(acct.apiKey, { text: TEXT, voiceId: gone.id });
  t.is(goneRes.res.status, 400);
  t.regex(goneRes.body.message, /no longer available/);
  const old = await (await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Cũ', baseVoiceId: 'vi-north-male-minh', engine: 'v3' } })).json();
  const oldRes = await submit(acct.apiKey, { text: TEXT, voiceId: old.id });
  t.is(oldRes.res.status, 400);
  t.is(oldRes.body.code, 'CLONE_ENGINE_RETIRED');
  t.is(oldRes.body.engine, 'v3');
});

test('SPEC Voice: a clone\'s display name, as GET /voices lists it, is accepted in place of its id; two clones of one name are 400 asking for the id; a catalogue name wins', async (t) => {
  const acct = await p.bootstrap();
  const clone = await (await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Giọng Ông Ba', baseVoiceId: 'vi-north-male-minh' } })).json();
  const listed = ((await (await p.api('/voices', { key: acct.apiKey })).json()) as { voices: Array<{ id: string; name: string }> }).voices;
  t.true(listed.some((v) => v.id === clone.id && v.name === 'Giọng Ông Ba'));
  const byName = await submit(acct.apiKey, { text: TEXT, voiceId: 'giọng ông ba' });
  t.is(byName.res.status, 201, JSON.stringify(byName.body));
  t.is((await (await p.api(`/tts/${byName.body.jobId}`, { key: acct.apiKey })).json()).voiceId, clone.id);
  // Another account's clone of that name is not this account's voice.
  const other = await p.bootstrap();
  t.is((await submit(other.apiKey, { text: TEXT, voiceId: 'Giọng Ông Ba' })).body.code, 'VOICE_NOT_FOUND');
  await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Giọng Ông Ba', baseVoiceId: 'vi-north-male-minh' } });
  const twice = await submit(acct.apiKey, { text: TEXT, voiceId: 'Giọng Ông Ba' });
  t.is(twice.res.status, 400);
  t.is(twice.body.code, 'VOICE_AMBIGUOUS');
  t.regex(twice.body.message, new RegExp(clone.id));
  await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Mai', baseVoiceId: 'vi-north-male-minh' } });
  const mai = await submit(acct.apiKey, { text: TEXT, voiceId: 'Mai' });
  t.is((await (await p.api(`/tts/${mai.body.jobId}`, { key: acct.apiKey })).json()).voiceId, 'vi-north-female-mai');
  // Names are those GET /voices lists for the request's engine: a v3 clone's name is not a v4 voice, nor does it make a v4 one ambiguous.
  await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Giọng Cổ', baseVoiceId: 'vi-north-male-minh', engine: 'v3' } });
  t.is((await submit(acct.apiKey, { text: TEXT, voiceId: 'Giọng Cổ' })).body.code, 'VOICE_NOT_FOUND');
  const solo = await (await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Giọng Cổ', baseVoiceId: 'vi-north-male-minh' } })).json();
  const v4 = await submit(acct.apiKey, { text: TEXT, voiceId: 'Giọng Cổ' });
  t.is((await (await p.api(`/tts/${v4.body.jobId}`, { key: acct.apiKey })).json()).voiceId, solo.id);
});

test('GRANT_TOKENS_EXHAUSTED: 403 with remaining and required', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 300 } });
  const { res, body } = await submit(acct.apiKey, { text: 'x '.repeat(60) + 'chào bạn' });
  t.is(res.status, 403);
  t.is(body.code, 'GRANT_TOKENS_EXHAUSTED');
  t.is(body.remaining, 300);
  t.true(body.required > 300);
});

test('GRANT_DAILY_LIMIT: 429 with resetAt, remaining, required and no Retry-After', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000, dailyCap: 300 } });
  t.is((await submit(acct.apiKey, { text: TEXT.slice(0, 40) })).res.status, 201);
  const { res, body } = await submit(acct.apiKey, { text: TEXT.slice(0, 41) });
  t.is(res.status, 429);
  t.is(body.code, 'GRANT_DAILY_LIMIT');
  t.truthy(body.resetAt);
  t.is(body.remaining, 105);
  t.is(body.required, 195);
  t.is(res.headers.get('retry-after'), null);
});

test('GRANT_WEEKLY_LIMIT: 429 with resetAt', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000, weeklyCap: 200 } });
  t.is((await submit(acct.apiKey, { text: TEXT.slice(0, 30) })).res.status, 201);
  const { res, body } = await submit(acct.apiKey, { text: TEXT.slice(0, 31) });
  t.is(res.status, 429);
  t.is(body.code, 'GRANT_WEEKLY_LIMIT');
  t.truthy(body.resetAt);
});

test('GRANT_EXPIRED: 403 without required when another grant exists but cannot pay', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000, expiresInDays: 1 } });
  await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 10 } });
  // Expire the key's grant in the embedded file, as time passing would.
  const db = (await import('../../core/adapters/embedded-db.ts')).openEmbeddedDb(p.dataDir);
  db.prepare('UPDATE grants SET expires_at = ? WHERE id = ?').run('2020-01-01T00:00:00.000Z', acct.grantId);
  db.close();
  const { res, body } = await submit(acct.apiKey, { text: TEXT });
  t.is(res.status, 403);
  t.is(body.code, 'GRANT_EXPIRED');
  t.is(body.required, undefined);
});

test('GRANT_INACTIVE: the key’s grant was replaced and no other grant covers the engine', async (t) => {
  const acct = await p.bootstrap();
  await p.admin(`/grants/${acct.grantId}`, { method: 'PATCH', json: { status: 'replaced' } });
  const { res, body } = await submit(acct.apiKey, { text: TEXT });
  t.is(res.status, 403);
  t.is(body.code, 'GRANT_INACTIVE');
  t.is(body.required, Math.ceil([...TEXT].length * 3.9 - 1e-9));
});

test('when the key’s grant cannot pay, the oldest other active grant of the account pays', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 100 } });
  const gift = await (await p.admin(`/accounts/${acct.accountId}/grants`, { method: 'POST', json: { totalTokens: 5000, isGift: true } })).json();
  t.is((await submit(acct.apiKey, { text: TEXT })).res.status, 201);
  const g = await (await p.platform.service(coreServices.documents)).grants.get(gift.id);
  t.true(g!.usedTokens > 0);
  const own = await (await p.platform.service(coreServices.documents)).grants.get(acct.grantId);
  t.is(own!.usedTokens, 0);
});

test('USER_QUEUE_FULL: the account holds its queued-job ceiling; 429 with retryAfterSeconds 15, nothing charged', async (t) => {
  const local = await startTestPlatform({ USER_QUEUE_MAX: '2', ROLES: 'api,pipelines' });
  try {
    const acct = await local.bootstrap({ grant: { totalTokens: 10_000 } });
    for (let i = 0; i < 2; i++) t.is((await local.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: `${TEXT} ${i}` } })).status, 201);
    const before = (await (await local.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens;
    const res = await local.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: `${TEXT} 3` } });
    t.is(res.status, 429);
    const body = await res.json();
    t.is(body.code, 'USER_QUEUE_FULL');
    t.is(body.retryAfterSeconds, 15);
    t.is(res.headers.get('retry-after'), '15');
    t.is((await (await local.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens, before);
  } finally {
    await local.stop();
  }
});

test('QUEUE_FULL: the job queue at its depth limit; 429 with retryAfterSeconds 15, nothing charged', async (t) => {
  const local = await startTestPlatform({ QUEUE_MAX_DEPTH: '1', ROLES: 'api,pipelines' });
  try {
    const a = await local.bootstrap();
    const b = await local.bootstrap({ grant: { totalTokens: 7000 } });
    t.is((await local.api('/tts', { method: 'POST', key: a.apiKey, json: { text: TEXT } })).status, 201);
    const res = await local.api('/tts', { method: 'POST', key: b.apiKey, json: { text: TEXT } });
    t.is(res.status, 429);
    const body = await res.json();
    t.is(body.code, 'QUEUE_FULL');
    t.is(body.retryAfterSeconds, 15);
    t.is((await (await local.api('/balance', { key: b.apiKey })).json()).totalRemainingTokens, 7000);
  } finally {
    await local.stop();
  }
});
