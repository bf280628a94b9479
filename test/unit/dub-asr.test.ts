import test from 'ava';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { detectModelLayout, ModelDirError } from '../../plugins/dub/asr/model-dir.ts';
import { createSherpaRecognizer, recognizerConfig } from '../../plugins/dub/asr/sherpa.ts';
import { AsrUnavailableError } from '../../plugins/dub/asr/port.ts';
import { parseVerboseJson, transcriptionsUrl } from '../../plugins/dub/asr/remote.ts';
import { createRecognizer } from '../../plugins/dub/asr/index.ts';

const dirs: string[] = [];
function modelDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'asr-model-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}
test.after.always(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test('ASR_MODEL: a Zipformer transducer directory is recognised, int8 files preferred', (t) => {
  const dir = modelDir({
    'encoder-epoch-12-avg-8.onnx': 'x', 'encoder-epoch-12-avg-8.int8.onnx': 'x', 'decoder-epoch-12-avg-8.onnx': 'x',
    'joiner-epoch-12-avg-8.int8.onnx': 'x', 'tokens.txt': '<blk> 0\n', 'README.md': '',
  });
  const layout = detectModelLayout(dir);
  t.deepEqual(layout, {
    kind: 'transducer', encoder: path.join(dir, 'encoder-epoch-12-avg-8.int8.onnx'), decoder: path.join(dir, 'decoder-epoch-12-avg-8.onnx'),
    joiner: path.join(dir, 'joiner-epoch-12-avg-8.int8.onnx'), tokens: path.join(dir, 'tokens.txt'),
  });
  t.like(recognizerConfig(layout, 'vi', 2) as object, {
    featConfig: { sampleRate: 16000, featureDim: 80 }, modelConfig: { transducer: { joiner: layout.kind === 'transducer' ? layout.joiner : '' }, numThreads: 2, provider: 'cpu' },
  });
});

test('ASR_MODEL: a Whisper export directory is recognised and set to transcribe Vietnamese', (t) => {
  const dir = modelDir({ 'small-encoder.onnx': 'x', 'small-decoder.onnx': 'x', 'small-tokens.txt': 'x' });
  const layout = detectModelLayout(dir);
  t.is(layout.kind, 'whisper');
  t.like(recognizerConfig(layout, 'vi', 1) as object, { modelConfig: { whisper: { language: 'vi', task: 'transcribe' }, tokens: path.join(dir, 'small-tokens.txt') } });
});

test('ASR_MODEL: a missing directory, a file, or a directory without a model is refused naming ASR_MODEL and what is missing', (t) => {
  t.throws(() => detectModelLayout('/nonexistent/asr-model'), { instanceOf: ModelDirError, message: /^ASR_MODEL: directory \/nonexistent\/asr-model does not exist/ });
  const dir = modelDir({ 'encoder.onnx': 'x', 'notes.txt': '' });
  t.throws(() => detectModelLayout(dir), { instanceOf: ModelDirError, message: /missing a decoder\*\.onnx, tokens\.txt/ });
  t.throws(() => detectModelLayout(path.join(dir, 'encoder.onnx')), { instanceOf: ModelDirError, message: /is not a directory/ });
  t.throws(() => createRecognizer({ ASR_MODEL: '/nonexistent/asr-model', ASR_REMOTE_MODEL: 'whisper-1', ASR_LANGUAGE: 'vi', ASR_TIMEOUT_SECONDS: 5, ASR_THREADS: 1 }), { instanceOf: ModelDirError });
});

test('sherpa-onnx loads the model in the background; a model it cannot parse makes transcription fail as unavailable, saying why', async (t) => {
  const dir = modelDir({ 'encoder.onnx': 'not onnx', 'decoder.onnx': 'not onnx', 'joiner.onnx': 'not onnx', 'tokens.txt': '<blk> 0\na 1\n' });
  const recognizer = createSherpaRecognizer({ dir, language: 'vi', threads: 1 });
  t.is(recognizer.name, 'sherpa-onnx');
  const err = await t.throwsAsync(recognizer.loaded, { instanceOf: AsrUnavailableError });
  t.regex(err!.message, /could not be loaded: .*(Protobuf parsing failed|Load model)/);
  await t.throwsAsync(() => recognizer.transcribe({ file: '/dev/null', seconds: 1 }), { instanceOf: AsrUnavailableError, message: /could not be loaded/ });
});

test('no ASR_URL and no ASR_MODEL: no recogniser', (t) => {
  t.is(createRecognizer({ ASR_REMOTE_MODEL: 'whisper-1', ASR_LANGUAGE: 'vi', ASR_TIMEOUT_SECONDS: 5, ASR_THREADS: 1 }), null);
});

test('remote: the endpoint is {ASR_URL}/audio/transcriptions; verbose_json segments become the transcript', (t) => {
  t.is(transcriptionsUrl('http://whisper:8000/v1/'), 'http://whisper:8000/v1/audio/transcriptions');
  t.is(transcriptionsUrl('http://whisper:8000/v1/audio/transcriptions'), 'http://whisper:8000/v1/audio/transcriptions');
  const transcript = parseVerboseJson({
    task: 'transcribe', language: 'vietnamese', duration: 9,
    segments: [{ id: 1, start: 4.2, end: 6, text: '  hai  ' }, { id: 0, start: 0.5, end: 2, text: ' một' }, { id: 2, start: 7, end: 7.5, text: '   ' }, { id: 3, start: 8, end: 12, text: 'bốn' }],
  }, 9);
  t.deepEqual(transcript, {
    language: 'vietnamese',
    segments: [{ start: 0.5, end: 2, text: 'một' }, { start: 4.2, end: 6, text: 'hai' }, { start: 8, end: 9, text: 'bốn' }],
  });
  t.deepEqual(parseVerboseJson({ text: 'chỉ có chữ' }, 3).segments, [{ start: 0, end: 3, text: 'chỉ có chữ' }]);
  t.throws(() => parseVerboseJson({ segments: [{ start: '0', end: 1, text: 'x' }] }, 3), { message: /segment 0/ });
  t.throws(() => parseVerboseJson('nope', 3));
});

// Keeps the temp-dir helper honest about nested layouts (a model unpacked into a sub-folder is not found).
test('ASR_MODEL must point at the folder holding the files, not its parent', (t) => {
  const parent = mkdtempSync(path.join(tmpdir(), 'asr-parent-'));
  dirs.push(parent);
  mkdirSync(path.join(parent, 'sherpa-onnx-zipformer-vi'));
  t.throws(() => detectModelLayout(parent), { instanceOf: ModelDirError });
});
