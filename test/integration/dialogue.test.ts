import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from '../helpers/wait.ts';
import { probeAudio } from '../helpers/audio-probe.ts';
import { decodeWav, firstSpeechAfter, speechSecondsBetween, speechWindows } from '../helpers/speech-regions.ts';
import { failAfter, silent, tapEngine } from '../helpers/engine-tap.ts';
import { coreServices } from '../../core/services.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform({ PLUGINS: 'catalog,account,dialogue,usage' });
});
test.after.always(async () => {
  await p?.stop();
});

const PAUSE_MS = 600;
const TURNS = [
  { text: 'Chào anh, hôm nay anh có khỏe không', voiceId: 'vi-north-female-mai' },
  { text: 'Cảm ơn em, anh vẫn khỏe như thường lệ', voiceId: 'Nam' },
  { text: 'Chúng ta cùng đi uống cà phê nhé', voiceId: 'vi-central-female-huong', emotion: 'storytelling' },
];
const characters = (texts: string[]) => texts.reduce((n, s) => n + [...s.normalize('NFC')].length, 0);
const price = (chars: number) => Math.ceil(Math.round(Math.max(50, chars) * 3.9 * 1e6) / 1e6);

async function post(key: string, body: unknown) {
  const res = await p.api('/dialogue', { method: 'POST', key, json: body });
  return { res, body: await res.json() };
}

async function remaining(key: string): Promise<number> {
  return (await (await p.api('/balance', { key })).json()).totalRemainingTokens;
}

test('POST /dialogue: 3 voices in one WAV; duration is the sum of the turns plus the pauses; offsets match the speech in the file', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const { res, body } = await post(acct.apiKey, { inputs: TURNS, pauseMs: PAUSE_MS });
  t.is(res.status, 201, JSON.stringify(body));
  t.regex(body.dialogueId, /^dlg_/);
  t.is(body.audioUrlExpiresIn, 86400);
  t.is(body.sampleRate, 48000);
  t.deepEqual(body.voiceSegments.map((s: any) => [s.inputIndex, s.voiceId]), [[0, 'vi-north-female-mai'], [1, 'vi-south-male-nam'], [2, 'vi-central-female-huong']]);

  const audio = await fetch(body.audioUrl);
  t.is(audio.status, 200);
  t.is(audio.headers.get('content-type'), 'audio/wav');
  const bytes = Buffer.from(await audio.arrayBuffer());
  const probed = await probeAudio(bytes);
  t.is(probed.codec, 'pcm_s16le');
  t.is(probed.sampleRate, 48000);
  t.is(probed.channels, 1);
  const turns = body.voiceSegments.reduce((sum: number, s: any) => sum + (s.end - s.start), 0);
  t.true(Math.abs(probed.duration - (turns + 2 * PAUSE_MS / 1000)) <= 0.05, `file ${probed.duration}s vs turns ${turns}s + 2 pauses`);
  t.true(Math.abs(body.duration - probed.duration) <= 0.01);

  const wav = decodeWav(bytes);
  const segments = body.voiceSegments as Array<{ start: number; end: number }>;
  segments.forEach((s, i) => {
    t.true(s.end - s.start > 0.5, `turn ${i} has speech`);
    const onset = firstSpeechAfter(wav, i === 0 ? 0 : segments[i - 1].end + 0.01)!;
    t.true(Math.abs(onset - s.start) <= 0.05, `turn ${i}: speech measured at ${onset}s, reported ${s.start}s`);
    if (i > 0) {
      // The gap between two turns is the pause, and it is silent.
      t.true(Math.abs(s.start - segments[i - 1].end - PAUSE_MS / 1000) <= 0.002);
      t.is(speechSecondsBetween(wav, segments[i - 1].end + 0.01, s.start - 0.01), 0, `pause before turn ${i} is silent`);
    }
  });
  // The last turn's speech runs to its reported end.
  const windows = speechWindows(wav);
  const lastSpeech = (windows.lastIndexOf(true) + 1) * 0.005;
  t.true(Math.abs(lastSpeech - segments[2].end) <= 0.05, `last speech ends at ${lastSpeech}s, reported ${segments[2].end}s`);

  const chars = characters(TURNS.map((x) => x.text));
  t.is(body.characters, chars);
  t.is(await remaining(acct.apiKey), 10_000 - price(chars), 'billed by submitted characters');
});

test('the default pause between speakers comes from DIALOGUE_PAUSE_MS (350 ms)', async (t) => {
  const acct = await p.bootstrap();
  const { res, body } = await post(acct.apiKey, { inputs: TURNS.slice(0, 2) });
  t.is(res.status, 201);
  const [a, b] = body.voiceSegments;
  t.true(Math.abs(b.start - a.end - 0.35) <= 0.002);
});

test('1 to 50 turns: an empty list and 51 turns are 400; unknown fields and aliases are refused', async (t) => {
  const acct = await p.bootstrap();
  const before = await remaining(acct.apiKey);
  const turn = { text: 'Xin chào.', voiceId: 'Mai' };
  const cases: Array<[unknown, RegExp]> = [
    [{ inputs: [] }, /1 to 50 turns/],
    [{ inputs: Array.from({ length: 51 }, () => turn) }, /1 to 50 turns/],
    [{ turns: [turn] }, /inputs is required","turns is not allowed/],
    [{ inputs: [{ text: 'Xin chào.', voice_id: 'Mai' }] }, /voiceId|voice_id/],
    [{ inputs: [{ text: '', voiceId: 'Mai' }] }, /must not be empty/],
  ];
  for (const [body, message] of cases) {
    const r = await post(acct.apiKey, body);
    t.is(r.res.status, 400, JSON.stringify(body).slice(0, 80));
    t.is(r.body.code, 'VALIDATION_FAILED');
    t.regex(JSON.stringify(r.body.message), message);
  }
  t.is((await post(acct.apiKey, { inputs: Array.from({ length: 50 }, () => turn) })).res.status, 201, '50 turns are accepted');
  t.true(await remaining(acct.apiKey) < before);
});

test('every voice must exist and belong to the engine: unknown voice, another engine\'s clone, retired engine are 400 before billing', async (t) => {
  const acct = await p.bootstrap();
  const docs = await p.platform.service(coreServices.documents);
  const foreignEngine = `clone_${randomUUID()}`;
  await docs.clones.create({
    id: foreignEngine, accountId: acct.accountId, name: 'Giọng khác', engine: 'v5', baseVoiceId: 'vi-north-male-minh', referenceAvailable: true, createdAt: new Date().toISOString(),
  } as any);
  const before = await remaining(acct.apiKey);
  const unknown = await post(acct.apiKey, { inputs: [TURNS[0], { text: 'Tôi là ai?', voiceId: 'alloy' }] });
  t.is(unknown.res.status, 400);
  t.is(unknown.body.code, 'VOICE_NOT_FOUND');
  t.regex(unknown.body.message, /^inputs\[1\]\.voiceId: .*alloy/, 'the message names the turn');
  const other = await post(acct.apiKey, { inputs: [{ text: 'Tôi nói bằng giọng khác.', voiceId: foreignEngine }] });
  t.is(other.res.status, 400);
  t.is(other.body.code, 'VOICE_ENGINE_MISMATCH');
  t.regex(other.body.message, /^inputs\[0\]\.voiceId: /);
  const retired = await post(acct.apiKey, { inputs: [TURNS[0]], engine: 'v3' });
  t.is(retired.res.status, 400);
  t.regex(retired.body.message, /retired on 2026-09-24/);
  t.is(await remaining(acct.apiKey), before, 'nothing charged');
});

test('an own clone is a turn voice', async (t) => {
  const acct = await p.bootstrap();
  const clone = await (await p.admin(`/accounts/${acct.accountId}/clones`, { method: 'POST', json: { name: 'Giọng tôi', baseVoiceId: 'vi-north-male-minh' } })).json();
  const { res, body } = await post(acct.apiKey, { inputs: [TURNS[0], { text: 'Đây là giọng nhân bản của tôi.', voiceId: clone.id }] });
  t.is(res.status, 201, JSON.stringify(body));
  t.is(body.voiceSegments[1].voiceId, clone.id);
});

test('the two text validations apply to every turn (400, message only, no code)', async (t) => {
  const acct = await p.bootstrap();
  const foreign = await post(acct.apiKey, { inputs: [TURNS[0], { text: 'これは日本語の文章です。ベトナム語ではありません。', voiceId: 'Mai' }] });
  t.is(foreign.res.status, 400);
  t.regex(foreign.body.message, /^Text appears to be in an unsupported language/);
  t.is(foreign.body.code, undefined);
  const unreadable = await post(acct.apiKey, { inputs: [{ text: 'Xin chào aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', voiceId: 'Mai' }] });
  t.is(unreadable.res.status, 400);
  t.regex(unreadable.body.message, /^Text does not look like readable words/);
});

test('aiRefine moderates the whole dialogue (422) and is billed with the surcharge', async (t) => {
  const q = await startTestPlatform({ PLUGINS: 'catalog,account,dialogue', MODERATION_TERMS: 'cấm kỵ' });
  try {
    const acct = await q.bootstrap({ grant: { totalTokens: 10_000 } });
    const refused = await q.api('/dialogue', { method: 'POST', key: acct.apiKey, json: { aiRefine: true, inputs: [TURNS[0], { text: 'Đây là chuyện cấm kỵ.', voiceId: 'Mai' }] } });
    t.is(refused.status, 422);
    const ok = await q.api('/dialogue', { method: 'POST', key: acct.apiKey, json: { aiRefine: true, inputs: [{ text: 'Công thức H2O là nước, giá 5% VAT.', voiceId: 'Mai' }] } });
    t.is(ok.status, 201);
    const chars = Math.max(50, [...'Công thức H2O là nước, giá 5% VAT.'].length);
    const spent = 10_000 - (await (await q.api('/balance', { key: acct.apiKey })).json()).totalRemainingTokens;
    t.is(spent, price(chars) + Math.ceil(chars * 0.5));
  } finally {
    await q.stop();
  }
});

// Serial: the engine tap would reach the other tests' renders.
test.serial('a turn that fails to render refunds the whole charge (500) and the outcome is an error on route dialogue', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const engine = await p.platform.service(coreServices.engine);
  let calls = 0;
  const tap = tapEngine(engine, (request, real) => (++calls === 3 ? failAfter(1)(request, real) : real(request)));
  try {
    const { res, body } = await post(acct.apiKey, { inputs: TURNS });
    t.is(res.status, 500);
    t.regex(body.message, /refunded/);
  } finally {
    tap.restore();
  }
  t.is(await remaining(acct.apiKey), 10_000, 'refunded in full');
  const report = await waitFor(async () => {
    const r = await (await p.api('/usage', { key: acct.apiKey })).json();
    return r.totals.requests >= 1 ? r : null;
  }, { timeoutMs: 15_000, what: 'dialogue usage' });
  const row = report.byRoute.find((r: any) => r.route === 'dialogue');
  t.like(row, { requests: 1, error: 1 });
});

test.serial('SPEC Billing rule 3: a turn with words that the engine renders as no audio at all fails the render (500), refunded; a turn of a cue tag alone is a pause', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const engine = await p.platform.service(coreServices.engine);
  let calls = 0;
  // The second turn's run ends normally with zero samples.
  const tap = tapEngine(engine, (request, real) => (++calls === 2 ? silent()(request, real) : real(request)));
  try {
    const { res, body } = await post(acct.apiKey, { inputs: TURNS });
    t.is(res.status, 500, JSON.stringify(body));
  } finally {
    tap.restore();
  }
  t.is(await remaining(acct.apiKey), 10_000, 'refunded in full');
  const laugh = await post(acct.apiKey, { inputs: [TURNS[0], { text: '[cười]', voiceId: 'Nam' }, TURNS[1]] });
  t.is(laugh.res.status, 201, JSON.stringify(laugh.body));
  t.is(laugh.body.voiceSegments.length, 3);
});

test('SPEC Billing 3 / README NOTHING_TO_SPEAK: a dialogue whose turns are all cue tags alone is 400 NOTHING_TO_SPEAK naming "inputs", before billing (every engine renders a cue tag as silence)', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  for (const inputs of [
    [{ text: '[cười]', voiceId: 'Mai' }],
    [{ text: '[cười]', voiceId: 'Mai' }, { text: '[thở dài] ... [hắng giọng]', voiceId: 'Nam' }],
  ]) {
    for (const aiRefine of [false, true]) {
      const { res, body } = await post(acct.apiKey, { inputs, aiRefine });
      t.is(res.status, 400, JSON.stringify(body));
      t.is(body.code, 'NOTHING_TO_SPEAK');
      t.regex(body.message, /^"inputs" holds only cue tags/);
    }
  }
  // A turn with nothing at all to speak is still named on its own.
  const empty = await post(acct.apiKey, { inputs: [TURNS[0], { text: '... !!!', voiceId: 'Nam' }] });
  t.is(empty.body.code, 'NOTHING_TO_SPEAK');
  t.regex(empty.body.message, /^"inputs\[1\]\.text" contains nothing that can be spoken/);
  t.is(await remaining(acct.apiKey), 10_000, 'nothing billed');
});

test('POST /dialogue is limited to 20 requests a minute per key (rateClass dialogue)', async (t) => {
  const q = await startTestPlatform({ PLUGINS: 'catalog,account,dialogue', RATE_DIALOGUE_PER_MINUTE: '2' });
  try {
    const acct = await q.bootstrap();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await q.api('/dialogue', { method: 'POST', key: acct.apiKey, json: { inputs: [] } })).status);
    t.deepEqual(statuses, [400, 400, 429]);
  } finally {
    await q.stop();
  }
});

test('GET /engines lists the dialogue feature only when the plugin is loaded', async (t) => {
  const features = async (q: TestPlatform) => (await (await q.api('/engines')).json()).engines[0].features as string[];
  t.true((await features(p)).includes('dialogue'));
  const q = await startTestPlatform({ PLUGINS: 'catalog,account' });
  try {
    t.false((await features(q)).includes('dialogue'));
    t.is((await q.api('/dialogue', { method: 'POST', json: { inputs: [] } })).status, 404);
  } finally {
    await q.stop();
  }
});
