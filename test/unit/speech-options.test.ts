import test from 'ava';
import { createVoiceCatalog } from '../../core/catalog.ts';
import { ApiError } from '../../core/errors.ts';
import { validate } from '../../core/http/validate.ts';
import type { ClonesStore } from '../../core/ports/documents.ts';
import { defaultEngines } from '../../config/engines.ts';
import { CATALOGUE, DEFAULT_VOICE_ID } from '../../config/voices.ts';
import type { AudioFormat } from '../../core/speechkit/audio/index.ts';
import { checkStreamFormat, chooseOutput, clampSpeed, compatEngine } from '../../plugins/speech/options.ts';
import { agentSpeechBody, audioSpeechBody, ttsStreamBody } from '../../plugins/speech/schemas.ts';
import { toApiError } from '../../core/http/envelopes.ts';

const catalog = createVoiceCatalog({ engines: defaultEngines(3), voices: CATALOGUE, defaultVoiceId: DEFAULT_VOICE_ID, clones: {} as ClonesStore });

function refusal(t: import('ava').ExecutionContext, fn: () => unknown, status: number): ApiError {
  const err = toApiError(t.throws(fn));
  t.is(err.status, status);
  return err;
}

for (const model of ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'service', 'service-v4', 'vieneu', 'vieneu-v4', 'TTS-1']) {
  test(`model "${model}" resolves to engine v4`, (t) => {
    t.is(compatEngine({ model }, catalog), 'v4');
  });
}

test('other model names are accepted and ignored (default engine)', (t) => {
  t.is(compatEngine({ model: 'whisper-1' }, catalog), 'v4');
  t.is(compatEngine({ model: 'gpt-4o-tts' }, catalog), 'v4');
  t.is(compatEngine({}, catalog), 'v4');
});

test('"service-v3" is 400 saying the model is retired', (t) => {
  const err = refusal(t, () => compatEngine({ model: 'service-v3' }, catalog), 400);
  t.regex(err.message, /retired/);
  t.is(err.fields.param, 'model');
});

test('a service-... or vieneu-... model naming a non-existent engine is 400', (t) => {
  t.is(refusal(t, () => compatEngine({ model: 'service-v9' }, catalog), 400).fields.param, 'model');
  refusal(t, () => compatEngine({ model: 'vieneu-turbo' }, catalog), 400);
});

test('engine wins over model', (t) => {
  t.is(compatEngine({ engine: 'v4', model: 'service-v3' }, catalog), 'v4');
  const err = refusal(t, () => compatEngine({ engine: 'v3', model: 'tts-1' }, catalog), 400);
  t.regex(err.message, /retired on 2026-09-24/);
});

const compat = (format: AudioFormat | undefined, sampleRate?: number, canEncode = (_: AudioFormat) => true) =>
  chooseOutput({ format, sampleRate, defaultFormat: 'mp3', pcmDefaultRate: 24000, params: { format: 'response_format', sampleRate: 'sample_rate' } }, canEncode);

test('defaults: mp3 at 48000; pcm at 24000 on the compatible route; opus 48000; ulaw 8000', (t) => {
  t.deepEqual(compat(undefined), { format: 'mp3', sampleRate: 48000, fellBack: false });
  t.is(compat('pcm').sampleRate, 24000);
  t.is(compat('wav').sampleRate, 48000);
  t.is(compat('opus').sampleRate, 48000);
  t.is(compat('ulaw').sampleRate, 8000);
  t.is(compat('pcm', 16000).sampleRate, 16000);
});

test('a rate that conflicts with opus or ulaw is 400; the fixed rate itself is fine', (t) => {
  t.is(refusal(t, () => compat('opus', 24000), 400).fields.param, 'sample_rate');
  refusal(t, () => compat('ulaw', 16000), 400);
  t.is(compat('opus', 48000).sampleRate, 48000);
  t.is(compat('ulaw', 8000).sampleRate, 8000);
});

test('without an encoder a named mp3/opus is 503 naming the format; no format named falls back to wav', (t) => {
  const noFfmpeg = (f: AudioFormat) => f !== 'mp3' && f !== 'opus';
  const mp3 = refusal(t, () => compat('mp3', undefined, noFfmpeg), 503);
  t.regex(mp3.message, /mp3/);
  t.regex(refusal(t, () => compat('opus', undefined, noFfmpeg), 503).message, /opus/);
  t.deepEqual(compat(undefined, undefined, noFfmpeg), { format: 'wav', sampleRate: 48000, fellBack: true });
  t.deepEqual(compat(undefined, 16000, noFfmpeg), { format: 'wav', sampleRate: 16000, fellBack: true });
  t.is(compat('pcm', undefined, noFfmpeg).format, 'pcm');
});

test('speed is clamped to 0.5..2.0', (t) => {
  t.is(clampSpeed(0.25), 0.5);
  t.is(clampSpeed(4), 2);
  t.is(clampSpeed(1.25), 1.25);
});

test('stream_format is valid only with pcm or ulaw', (t) => {
  t.notThrows(() => checkStreamFormat('audio', 'pcm'));
  t.notThrows(() => checkStreamFormat('sse', 'ulaw'));
  t.notThrows(() => checkStreamFormat(undefined, 'mp3'));
  for (const format of ['mp3', 'wav', 'opus'] as const) t.is(refusal(t, () => checkStreamFormat('audio', format), 400).fields.param, 'stream_format');
});

test('compatible body: aac and flac are 400 as unsupported; speed outside 0.25..4.0 is 400; unknown fields ignored', (t) => {
  const aac = refusal(t, () => validate(audioSpeechBody, { input: 'x', response_format: 'aac' }), 400);
  t.regex(aac.message, /aac is not supported/);
  t.is(aac.fields.param, 'response_format');
  t.regex(refusal(t, () => validate(audioSpeechBody, { input: 'x', response_format: 'flac' }), 400).message, /flac is not supported/);
  refusal(t, () => validate(audioSpeechBody, { input: 'x', speed: 4.5 }), 400);
  refusal(t, () => validate(audioSpeechBody, { input: 'x', speed: 0.2 }), 400);
  refusal(t, () => validate(audioSpeechBody, { input: 'x', sample_rate: 12345 }), 400);
  refusal(t, () => validate(audioSpeechBody, { input: 'x', emotion: 'angry' }), 400);
  t.is(refusal(t, () => validate(audioSpeechBody, {}), 400).fields.param, 'input');
  const ok = validate(audioSpeechBody, { input: 'x', instructions: 'cheerful', emotion: 'storytelling', user: 'someone' });
  t.is(ok.speed, 1);
  t.false(ok.aiRefine);
});

test('native stream body: speed is strict 0.5..2.0, wav is the default format, emotions per SPEC', (t) => {
  refusal(t, () => validate(ttsStreamBody, { text: 'x', speed: 2.5 }), 400);
  refusal(t, () => validate(ttsStreamBody, { text: 'x', speed: 0.25 }), 400);
  refusal(t, () => validate(ttsStreamBody, { text: 'x', emotion: 'angry' }), 400);
  refusal(t, () => validate(ttsStreamBody, { text: 'x'.repeat(50_001) }), 400);
  const body = validate(ttsStreamBody, { text: 'x', emotion: 'emotion_19' });
  t.is(body.outputFormat, 'wav');
  t.is(body.emotion, 'emotion_19');
});

test('agent body: voice-request only, non-empty text, rates 8000/16000/22050/24000', (t) => {
  const ok = { message: { type: 'voice-request', text: 'Xin chào', sampleRate: 16000, timestamp: 1 }, call: { id: 'c' } };
  t.is(validate(agentSpeechBody, ok).message.sampleRate, 16000);
  refusal(t, () => validate(agentSpeechBody, { message: { ...ok.message, type: 'assistant-request' } }), 400);
  refusal(t, () => validate(agentSpeechBody, { message: { ...ok.message, text: '' } }), 400);
  // Kept as sent (it is billed as sent); text preparation refuses it, 400 NOTHING_TO_SPEAK (speech-agent.test.ts).
  t.is(validate(agentSpeechBody, { message: { ...ok.message, text: '  Xin chào  ' } }).message.text, '  Xin chào  ');
  refusal(t, () => validate(agentSpeechBody, { message: { ...ok.message, sampleRate: 44100 } }), 400);
  refusal(t, () => validate(agentSpeechBody, {}), 400);
});
