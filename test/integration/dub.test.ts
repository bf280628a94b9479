import test from 'ava';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { connect } from 'node:net';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { startTranscriptionServer, type TranscriptionServer } from '../helpers/transcription-server.ts';
import { makeRecording } from '../helpers/recordings.ts';
import { decodeWav, firstSpeechAfter } from '../helpers/speech-regions.ts';
import { probeAudio } from '../helpers/audio-probe.ts';
import { waitFor } from '../helpers/wait.ts';
import { writeTinyTransducer } from '../helpers/make-tiny-transducer.ts';
import { silent, tapEngine } from '../helpers/engine-tap.ts';
import { coreServices } from '../../core/services.ts';

const SCRIPT = ['xin chào các bạn', 'hôm nay trời rất đẹp', 'chúng ta đi dạo nhé'];
const UTTERANCES = [
  { at: 0.5, text: 'Xin chào các bạn' },
  { at: 3.2, text: 'Hôm nay trời rất đẹp' },
  { at: 6.1, text: 'Chúng ta đi dạo nhé' },
];
const SOURCE_SECONDS = 8.5;

let asr: TranscriptionServer;
let p: TestPlatform;
test.before(async () => {
  asr = await startTranscriptionServer(SCRIPT);
  p = await startTestPlatform({ PLUGINS: 'catalog,account,dub,usage', ASR_URL: asr.url, ASR_REMOTE_MODEL: 'whisper-large-v3', ASR_API_KEY: 'asr-secret' });
});
test.after.always(async () => {
  await p?.stop();
  await asr?.close();
});

const dubPrice = (seconds: number) => Math.ceil(Math.round(Math.max(150, 65 * seconds) * 3 * 1e6) / 1e6);
const remaining = async (q: TestPlatform, key: string) => (await (await q.api('/balance', { key })).json()).totalRemainingTokens;

async function postDub(q: TestPlatform, key: string, audio: Buffer | null, fields: Record<string, string>, name = 'recording.ogg', type = 'audio/ogg') {
  const form = new FormData();
  if (audio) form.append('audio', new Blob([new Uint8Array(audio)], { type }), name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await q.api('/dub', { method: 'POST', key, body: form });
  return { res, body: await res.json() };
}

test.serial('POST /dub through the remote transcription API: segments re-voiced at their source times, charged 65 tokens per output second x3', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const source = await makeRecording(p, UTTERANCES, SOURCE_SECONDS, 'ogg');
  const seen = asr.requests.length;
  const { res, body } = await postDub(p, acct.apiKey, source, { voiceId: 'vi-south-female-lan', emotion: 'storytelling', temperature: '0.7' });
  t.is(res.status, 201, JSON.stringify(body));

  // The transcription request has the OpenAI-compatible shape.
  t.is(asr.requests.length, seen + 1);
  const sent = asr.requests.at(-1)!;
  t.like(sent.fields, { model: 'whisper-large-v3', response_format: 'verbose_json', language: 'vi' });
  t.is(sent.authorization, 'Bearer asr-secret');
  t.is(sent.fileBytes, source.length, 'the upload reached the server whole');

  t.regex(body.dubId, /^dub_/);
  t.is(body.voiceId, 'vi-south-female-lan');
  t.is(body.audioUrlExpiresIn, 86400);
  t.is(body.transcript.language, 'vietnamese');
  t.deepEqual(body.transcript.segments.map((s: any) => s.text), SCRIPT);
  body.transcript.segments.forEach((s: any, i: number) => t.true(Math.abs(s.start - UTTERANCES[i].at) <= 0.05, `segment ${i} starts ${s.start}s`));

  const audio = Buffer.from(await (await fetch(body.audioUrl)).arrayBuffer());
  const probed = await probeAudio(audio);
  t.is(probed.sampleRate, 48000);
  t.true(Math.abs(probed.duration - body.duration) <= 0.01);
  t.true(Math.abs(body.duration - SOURCE_SECONDS) <= 0.05, `the dub lasts as long as the recording (${body.duration}s)`);
  const wav = decodeWav(audio);
  body.transcript.segments.forEach((s: any, i: number) => {
    const from = i === 0 ? 0 : body.alignment[i - 1].speechEnd + 0.02;
    const onset = firstSpeechAfter(wav, from)!;
    t.true(Math.abs(onset - UTTERANCES[i].at) <= 0.05, `re-voiced segment ${i} at ${onset}s, source at ${UTTERANCES[i].at}s`);
  });

  const expected = dubPrice(body.duration);
  t.is(await remaining(p, acct.apiKey), 10_000 - expected, `charged exactly ceil(max(150, 65 x ${body.duration}) x 3) = ${expected}`);
  const row = await waitFor(async () => {
    const r = await (await p.api('/usage', { key: acct.apiKey })).json();
    return r.byRoute.find((x: any) => x.route === 'dub');
  }, { timeoutMs: 15_000, what: 'dub usage' });
  t.like(row, { requests: 1, ok: 1, tokenCost: expected });
});

test.serial('413 on an 11 MB upload, refused while it streams, with the server\'s memory growth bounded; nothing reaches the recogniser', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const retained = () => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const acct = await p.bootstrap();
  const seen = asr.requests.length;
  const boundary = `----dub${Date.now()}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="voiceId"\r\n\r\nMai\r\n--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="big.mp3"\r\nContent-Type: audio/mpeg\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const fileBytes = 11 * 1024 * 1024;
  const { hostname, port } = new URL(p.url);
  // A raw socket, so "sent" is what left the client, not what a client library buffered.
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (d: Buffer) => { answer += d.toString(); });
  socket.on('error', () => undefined); // the server may close its side once it has answered
  socket.write(`POST /api/v1/dub HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${acct.apiKey}\r\n` +
    `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + fileBytes + tail.length}\r\n\r\n`);
  socket.write(head);
  const baseline = retained();
  const chunk = Buffer.alloc(64 * 1024, 0x55);
  let sent = 0;
  let peak = 0;
  while (sent < fileBytes && answer === '' && !socket.destroyed) {
    if (!socket.write(chunk)) await Promise.race([once(socket, 'drain'), once(socket, 'close')]);
    sent += chunk.length;
    if (sent % (1024 * 1024) === 0) peak = Math.max(peak, retained() - baseline);
    // Slower near the limit: loopback buffers can otherwise take the last MiB before the server has read the tenth.
    await new Promise((r) => setTimeout(r, sent > 9.5 * 1024 * 1024 ? 20 : 1));
  }
  await waitFor(() => /\r\n\r\n\{.*\}/s.test(answer), { timeoutMs: 10_000, what: 'the answer' });
  socket.destroy();
  t.regex(answer, /^HTTP\/1\.1 413 /);
  t.is(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).code, 'PAYLOAD_TOO_LARGE');
  t.true(sent < fileBytes, `answered while the upload streamed, after ${sent} of ${fileBytes} bytes`);
  // Buffering the upload would hold 10 MiB by the end; streaming to disk holds a few socket chunks (spikes of about 2 MiB seen).
  t.true(peak < 5 * 1024 * 1024, `retained memory grew by ${(peak / 1048576).toFixed(2)} MiB while ${(sent / 1048576).toFixed(1)} MiB streamed in`);
  t.log(`answered after ${(sent / 1048576).toFixed(2)} MiB sent; retained memory peak +${(peak / 1048576).toFixed(2)} MiB`);
  t.is(asr.requests.length, seen);
});

test('a text file renamed .mp3 is 400 UNSUPPORTED_AUDIO (the content decides, not the name); no audio is 400', async (t) => {
  const acct = await p.bootstrap();
  const seen = asr.requests.length;
  const text = Buffer.from('Đây không phải là một tệp âm thanh.\n'.repeat(200), 'utf8');
  const renamed = await postDub(p, acct.apiKey, text, { voiceId: 'Mai' }, 'speech.mp3', 'audio/mpeg');
  t.is(renamed.res.status, 400);
  t.is(renamed.body.code, 'UNSUPPORTED_AUDIO');
  const none = await postDub(p, acct.apiKey, null, { voiceId: 'Mai' });
  t.is(none.res.status, 400);
  t.is(none.body.code, 'FILE_REQUIRED');
  const asText = await postDub(p, acct.apiKey, null, { voiceId: 'Mai', audio: 'speech.mp3' });
  t.like(asText, { res: { status: 400 }, body: { code: 'FILE_REQUIRED' } }, 'a recording sent as a text field is the file that did not come');
  t.regex(asText.body.message, /"audio" came as a text field: .*multipart file field named audio/);
  const noVoice = await postDub(p, acct.apiKey, text, {});
  t.is(noVoice.res.status, 400);
  t.is(noVoice.body.code, 'VALIDATION_FAILED');
  const unknownVoice = await postDub(p, acct.apiKey, text, { voiceId: 'alloy' });
  t.is(unknownVoice.res.status, 400);
  t.is(unknownVoice.body.code, 'VOICE_NOT_FOUND');
  t.is(asr.requests.length, seen);
});

test.serial('SPEC Billing 6: aiRefine defaults to false on every route, so /dub accepts aiRefine=false (201); aiRefine=true, which /dub cannot apply, stays 400 before any transcription', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const source = await makeRecording(p, UTTERANCES.slice(0, 1), 2.5, 'wav');
  const seen = asr.requests.length;
  const refused = await postDub(p, acct.apiKey, source, { voiceId: 'Mai', aiRefine: 'true' }, 'a.wav', 'audio/wav');
  t.is(refused.res.status, 400);
  t.is(refused.body.code, 'VALIDATION_FAILED');
  t.regex(String(refused.body.message), /"aiRefine" must be false on \/dub/);
  t.is(asr.requests.length, seen, 'nothing was transcribed');
  t.is(await remaining(p, acct.apiKey), 10_000);
  const { res, body } = await postDub(p, acct.apiKey, source, { voiceId: 'Mai', aiRefine: 'false' }, 'a.wav', 'audio/wav');
  t.is(res.status, 201, JSON.stringify(body));
  t.is(await remaining(p, acct.apiKey), 10_000 - dubPrice(body.duration));
});

test('an account that cannot afford the upload\'s duration is refused (403 GRANT_TOKENS_EXHAUSTED) before any transcription', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 1_000 } });
  const source = await makeRecording(p, UTTERANCES, SOURCE_SECONDS, 'wav');
  const seen = asr.requests.length;
  const { res, body } = await postDub(p, acct.apiKey, source, { voiceId: 'Mai' }, 'a.wav', 'audio/wav');
  t.is(res.status, 403);
  t.is(body.code, 'GRANT_TOKENS_EXHAUSTED');
  t.is(body.remaining, 1_000);
  t.is(body.required, dubPrice(SOURCE_SECONDS), `priced on the upload's own ${SOURCE_SECONDS} s: ceil(65 x 8.5 x 3)`);
  t.is(asr.requests.length, seen, 'nothing was transcribed');
  t.is(await remaining(p, acct.apiKey), 1_000);
});

test('a spent daily cap is 429 GRANT_DAILY_LIMIT before transcription', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 100_000, dailyCap: 500 } });
  const source = await makeRecording(p, UTTERANCES.slice(0, 1), 3, 'wav');
  const seen = asr.requests.length;
  const { res, body } = await postDub(p, acct.apiKey, source, { voiceId: 'Mai' }, 'a.wav', 'audio/wav');
  t.is(res.status, 429);
  t.is(body.code, 'GRANT_DAILY_LIMIT');
  t.is(asr.requests.length, seen);
});

test('without ASR configured POST /dub is 503 ASR_NOT_CONFIGURED before any charge; GET /engines lists dub', async (t) => {
  const q = await startTestPlatform({ PLUGINS: 'catalog,account,dub' });
  try {
    const acct = await q.bootstrap({ grant: { totalTokens: 10_000 } });
    const source = await makeRecording(q, UTTERANCES.slice(0, 1), 2, 'wav');
    const { res, body } = await postDub(q, acct.apiKey, source, { voiceId: 'Mai' }, 'a.wav', 'audio/wav');
    t.is(res.status, 503);
    t.is(body.code, 'ASR_NOT_CONFIGURED');
    t.regex(body.message, /ASR_URL.*ASR_MODEL/);
    t.is(await remaining(q, acct.apiKey), 10_000);
    t.true((await (await q.api('/engines')).json()).engines[0].features.includes('dub'));
  } finally {
    await q.stop();
  }
});

test.serial('a recogniser that fails is 503 ASR_UNAVAILABLE with Retry-After (5xx) or 502 ASR_FAILED (4xx answer); nothing is charged', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const source = await makeRecording(p, UTTERANCES.slice(0, 1), 2, 'wav');
  try {
    asr.failWith = 500;
    const down = await postDub(p, acct.apiKey, source, { voiceId: 'Mai' }, 'a.wav', 'audio/wav');
    t.is(down.res.status, 503);
    t.like(down.body, { code: 'ASR_UNAVAILABLE', retryAfterSeconds: 5 });
    t.is(down.res.headers.get('retry-after'), '5', 'a 503 says when to retry');
    asr.failWith = 400;
    const refused = await postDub(p, acct.apiKey, source, { voiceId: 'Mai' }, 'a.wav', 'audio/wav');
    t.is(refused.res.status, 502);
    t.is(refused.body.code, 'ASR_FAILED');
  } finally {
    asr.failWith = null;
  }
  t.is(await remaining(p, acct.apiKey), 10_000);
});

test.serial('SPEC Billing rule 3: a segment that the engine renders as no audio at all fails the dub (500) and nothing is charged', async (t) => {
  const acct = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  const source = await makeRecording(p, UTTERANCES, SOURCE_SECONDS, 'ogg');
  const engine = await p.platform.service(coreServices.engine);
  let calls = 0;
  const tap = tapEngine(engine, (request, real) => (++calls === 2 ? silent()(request, real) : real(request)));
  try {
    const { res, body } = await postDub(p, acct.apiKey, source, { voiceId: 'vi-south-female-lan' });
    t.is(res.status, 500, JSON.stringify(body));
  } finally {
    tap.restore();
  }
  t.is(await remaining(p, acct.apiKey), 10_000);
});

test('POST /dub shares the media rate class: 10 requests a minute per key', async (t) => {
  const q = await startTestPlatform({ PLUGINS: 'catalog,account,dub', RATE_MEDIA_PER_MINUTE: '2' });
  try {
    const acct = await q.bootstrap();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await postDub(q, acct.apiKey, null, { voiceId: 'Mai' })).res.status);
    t.deepEqual(statuses, [400, 400, 429]);
  } finally {
    await q.stop();
  }
});

test('ASR_MODEL: a wrong directory stops start-up naming it; ASR_URL and ASR_MODEL together are refused', async (t) => {
  await t.throwsAsync(() => startTestPlatform({ PLUGINS: 'catalog,dub', ASR_MODEL: '/nonexistent/zipformer-vi' }), {
    message: /plugin dub: ASR_MODEL: directory \/nonexistent\/zipformer-vi does not exist/,
  });
  await t.throwsAsync(() => startTestPlatform({ PLUGINS: 'catalog,dub', ASR_MODEL: '/tmp', ASR_URL: 'http://127.0.0.1:9/v1' }), {
    message: /plugin dub: set one of ASR_URL .* or ASR_MODEL/,
  });
});

test('ASR_MODEL with a model sherpa-onnx cannot load: POST /dub is 503 ASR_UNAVAILABLE saying why, nothing charged', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'broken-model-'));
  for (const f of ['encoder.int8.onnx', 'decoder.onnx', 'joiner.int8.onnx']) writeFileSync(path.join(dir, f), 'truncated download');
  writeFileSync(path.join(dir, 'tokens.txt'), '<blk> 0\n');
  const q = await startTestPlatform({ PLUGINS: 'catalog,account,dub', ASR_MODEL: dir });
  try {
    const acct = await q.bootstrap({ grant: { totalTokens: 10_000 } });
    const source = await makeRecording(q, UTTERANCES.slice(0, 1), 2, 'flac');
    const { res, body } = await postDub(q, acct.apiKey, source, { voiceId: 'Mai' }, 'a.flac', 'audio/flac');
    t.is(res.status, 503);
    t.is(body.code, 'ASR_UNAVAILABLE');
    t.regex(body.message, /could not be loaded/);
    t.is(await remaining(q, acct.apiKey), 10_000);
  } finally {
    await q.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('POST /dub through the in-process adapter (ASR_MODEL, a tiny transducer): loaded at start-up, segments at their source times, charged by duration', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tiny-asr-'));
  await writeTinyTransducer(dir);
  const q = await startTestPlatform({ PLUGINS: 'catalog,account,dub', ASR_MODEL: dir });
  try {
    const acct = await q.bootstrap({ grant: { totalTokens: 10_000 } });
    const source = await makeRecording(q, UTTERANCES.slice(0, 2), 6, 'm4a');
    const { res, body } = await postDub(q, acct.apiKey, source, { voiceId: 'vi-north-female-mai' }, 'a.m4a', 'audio/mp4');
    t.is(res.status, 201, JSON.stringify(body).slice(0, 300));
    t.is(body.transcript.segments.length, 2);
    body.transcript.segments.forEach((s: any, i: number) => {
      t.true(Math.abs(s.start - UTTERANCES[i].at) <= 0.06, `segment ${i} at ${s.start}s`);
      t.regex(s.text, /^xin( xin)*$/, 'the tiny model says "xin" for every voiced frame');
    });
    const wav = decodeWav(Buffer.from(await (await fetch(body.audioUrl)).arrayBuffer()));
    t.true(Math.abs(firstSpeechAfter(wav, 0)! - UTTERANCES[0].at) <= 0.06);
    t.is(await remaining(q, acct.apiKey), 10_000 - dubPrice(body.duration));
  } finally {
    await q.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
