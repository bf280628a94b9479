import test from 'ava';
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

const TEXT = 'Thống kê sử dụng cho biết mỗi khóa đã gọi bao nhiêu lần và tốn bao nhiêu.';

async function usage(key: string, query = '') {
  const res = await p.api(`/usage${query}`, { key });
  return { res, body: await res.json() };
}

test('GET /usage: rows of POST /tts start queued and close as ok; 4xx refusals are denied and never billed', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const ok = await (await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: TEXT, voiceId: 'vi-central-male-hung' } })).json();
  t.is((await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: TEXT, voiceId: 'nobody' } })).status, 400);
  await waitFor(async () => (await (await p.api(`/tts/${ok.jobId}`, { key: acct.apiKey })).json()).status === 'completed', { timeoutMs: 30_000 });
  const report = await waitFor(async () => {
    const { body } = await usage(acct.apiKey);
    return body.totals.requests === 2 && body.totals.ok === 1 ? body : null;
  }, { timeoutMs: 15_000, what: 'usage to show both requests' });
  t.is(report.scope, 'key');
  t.is(report.apiKeyId, acct.keyId);
  t.is(report.userId, acct.accountId);
  t.is(report.totals.queued, 0);
  t.is(report.totals.denied, 1);
  t.is(report.totals.error, 0);
  t.is(report.totals.tokenCost, Math.ceil([...TEXT].length * 3.9));
  t.is(report.totals.characters, [...TEXT].length);
  t.true(report.totals.audioSeconds > 0);
  t.true(report.totals.avgGenMs > 0);
  t.true(report.totals.p95GenMs > 0);
  t.is(report.byDay.length, 1);
  const tts = report.byRoute.find((r: any) => r.route === 'tts');
  t.like(tts, { requests: 2, ok: 1, denied: 1 });
  const voice = report.byVoice.find((v: any) => v.voice === 'vi-central-male-hung');
  t.like(voice, { voiceName: 'Hùng', engine: 'v4', requests: 1 });
  t.deepEqual(report.byErrorCode.map((r: any) => [r.errorCode, r.statusCode, r.count]), [['http_400', 400, 1]]);
});

test('byVoice files a refusal under the voice asked for on every speech route, as on POST /tts', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 100 } });
  const voice = 'vi-central-male-hung';
  const refused = [
    await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: TEXT, voiceId: voice } }),
    await p.api('/audio/speech', { method: 'POST', key: acct.apiKey, json: { input: TEXT, voice } }),
    await p.api('/tts/stream', { method: 'POST', key: acct.apiKey, json: { text: TEXT, voiceId: voice } }),
  ];
  t.deepEqual(refused.map((r) => r.status), [403, 403, 403], 'the grant cannot pay');
  const report = await waitFor(async () => {
    const { body } = await usage(acct.apiKey);
    return body.totals.requests === 3 ? body : null;
  }, { timeoutMs: 15_000, what: 'usage to show the three refusals' });
  t.like(report.totals, { denied: 3, characters: 0, tokenCost: 0 });
  t.deepEqual(report.byVoice.map((row: { voice: string; requests: number }) => [row.voice, row.requests]), [[voice, 3]]);
});

test('GET /usage scope=account sums every key of the account; scope=key only the calling key', async (t) => {
  const acct = await p.bootstrap();
  const second = await (await p.admin(`/accounts/${acct.accountId}/keys`, { method: 'POST', json: {} })).json();
  await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: TEXT } });
  await p.api('/tts', { method: 'POST', key: second.apiKey, json: { text: TEXT + ' Hai.' } });
  const account = await waitFor(async () => {
    const { body } = await usage(acct.apiKey, '?scope=account');
    return body.totals.requests === 2 ? body : null;
  }, { what: 'account usage' });
  t.is(account.scope, 'account');
  t.is(account.apiKeyId, null);
  t.is((await usage(second.apiKey)).body.totals.requests, 1);
});

test('rate-limited calls never reach the ledger or usage', async (t) => {
  const local = await startTestPlatform({ RATE_SPEECH_PER_MINUTE: '1' });
  try {
    const acct = await local.bootstrap();
    t.is((await local.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: TEXT } })).status, 201);
    const limited = await local.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: TEXT } });
    t.is(limited.status, 429);
    t.truthy(limited.headers.get('x-ratelimit-limit'));
    const requests = async () => (await (await local.api('/usage', { key: acct.apiKey })).json()).totals.requests as number;
    await waitFor(async () => (await requests()) >= 1, { what: 'the accepted request in usage' });
    // Longer than the aggregator's batch wait (1 s): a refused call's event would have landed by now.
    await new Promise((r) => setTimeout(r, 2500));
    t.is(await requests(), 1);
  } finally {
    await local.stop();
  }
});

const BAD: Array<[string, string]> = [
  ['an unparseable date', '?from=yesterday'],
  ['a day the calendar does not have (not rolled over into March)', '?from=2026-02-30&to=2026-03-05'],
  ['a bad scope', '?scope=team'],
  ['a window over 92 days', '?from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z'],
  ['from after to', '?from=2026-06-02T00:00:00Z&to=2026-06-01T00:00:00Z'],
];

for (const [rule, query] of BAD) {
  test(`GET /usage is 400 VALIDATION_FAILED on ${rule}, like every validation failure`, async (t) => {
    const acct = await p.bootstrap();
    const { res, body } = await usage(acct.apiKey, query);
    t.is(res.status, 400);
    t.true(Array.isArray(body.message));
    t.is(body.code, 'VALIDATION_FAILED');
  });
}

test('GET /usage defaults to the last 30 days', async (t) => {
  const acct = await p.bootstrap();
  const { body } = await usage(acct.apiKey);
  const days = (Date.parse(body.to) - Date.parse(body.from)) / 86_400_000;
  t.is(Math.round(days), 30);
  t.is(body.totals.requests, 0);
  t.is(body.totals.avgGenMs, null);
  t.is(body.totals.p95GenMs, null);
});

test('a malformed outcome event goes to request.outcomes.dlq and does not stall the events behind it', async (t) => {
  const acct = await p.bootstrap();
  const bus = await p.platform.service(coreServices.bus);
  const bad = { id: 'out_bad_1', at: 'not a date', accountId: acct.accountId, route: 'tts', status: 201, result: 'ok' };
  await bus.publish('request.outcomes', [{ id: bad.id, key: acct.accountId, value: bad }]);
  t.is((await p.api('/tts', { method: 'POST', key: acct.apiKey, json: { text: TEXT } })).status, 201);
  await waitFor(async () => (await (await p.api('/usage', { key: acct.apiKey })).json()).totals.requests === 1, { what: 'the good event in usage' });
  await waitFor(async () => (await bus.lag('request.outcomes.dlq', 'dlq-inspector')) >= 1, { what: 'the bad event in the dead-letter topic' });
  t.pass();
});
