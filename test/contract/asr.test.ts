/**
 * The dub plugin's ASR port, one suite for both adapters: the remote one
 * against a transcription server speaking the OpenAI-compatible API, and the
 * in-process sherpa-onnx one loading a tiny transducer built for the test
 * (the real loader, feature extraction and greedy search run on it).
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { wavFile } from '../../core/speechkit/audio/wav.ts';
import { createRemoteRecognizer } from '../../plugins/dub/asr/remote.ts';
import { createSherpaRecognizer } from '../../plugins/dub/asr/sherpa.ts';
import type { SpeechRecognizer } from '../../plugins/dub/asr/port.ts';
import { startTranscriptionServer, type TranscriptionServer } from '../helpers/transcription-server.ts';
import { writeTinyTransducer } from '../helpers/make-tiny-transducer.ts';
import { encodeWav } from '../helpers/recordings.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'asr-contract-'));
let server: TranscriptionServer;
const adapters: Array<{ name: string; make: () => Promise<SpeechRecognizer> }> = [
  {
    name: 'remote (OpenAI-compatible server)',
    make: async () => createRemoteRecognizer({ url: server.url, model: 'whisper-1', language: 'vi', apiKey: null, timeoutMs: 10_000 }),
  },
  {
    name: 'in process (sherpa-onnx, tiny transducer)',
    make: async () => {
      const modelDir = path.join(dir, 'model');
      await writeTinyTransducer(modelDir);
      const recognizer = createSherpaRecognizer({ dir: modelDir, language: 'vi', threads: 1 });
      await recognizer.loaded;
      return recognizer;
    },
  },
];

test.before(async () => {
  server = await startTranscriptionServer(['xin chào']);
});
test.after.always(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Two bursts of a voiced, wobbling tone at 0.5 s (1.2 s long) and 3.0 s (1.5 s long) in 5 s of silence. */
function recording(rate = 16000): Buffer {
  const pcm = Buffer.alloc(rate * 5 * 2);
  const burst = (at: number, seconds: number) => {
    for (let i = 0; i < seconds * rate; i++) {
      const v = Math.sin((2 * Math.PI * 180 * i) / rate) * 0.5 + Math.sin((2 * Math.PI * 720 * i) / rate) * 0.2;
      pcm.writeInt16LE(Math.round(v * 12000 * (0.8 + 0.2 * Math.sin(i / 400))), (Math.round(at * rate) + i) * 2);
    }
  };
  burst(0.5, 1.2);
  burst(3.0, 1.5);
  return wavFile(pcm, rate);
}

for (const adapter of adapters) {
  test.serial(`ASR port, ${adapter.name}: each utterance is a segment with its source times and its text`, async (t) => {
    const recognizer = await adapter.make();
    const file = path.join(dir, 'speech.ogg');
    writeFileSync(file, await encodeWav(recording(), 'ogg'));
    const transcript = await recognizer.transcribe({ file, seconds: 5 });
    t.is(transcript.segments.length, 2, JSON.stringify(transcript.segments));
    const [a, b] = transcript.segments;
    t.true(Math.abs(a.start - 0.5) <= 0.05 && Math.abs(a.end - 1.7) <= 0.05, `first segment ${a.start}-${a.end}`);
    t.true(Math.abs(b.start - 3.0) <= 0.05 && Math.abs(b.end - 4.5) <= 0.05, `second segment ${b.start}-${b.end}`);
    t.regex(a.text, /^xin( xin)*$|^xin chào$/);
    t.is(a.text, a.text.trim());
    await recognizer.close();
  });

  test.serial(`ASR port, ${adapter.name}: a silent recording has no segments`, async (t) => {
    const recognizer = await adapter.make();
    const file = path.join(dir, 'silence.wav');
    writeFileSync(file, wavFile(Buffer.alloc(16000 * 2 * 2), 16000));
    t.deepEqual((await recognizer.transcribe({ file, seconds: 2 })).segments, []);
  });
}

test('ASR port, remote: an unreachable server is AsrUnavailableError naming the cause', async (t) => {
  const recognizer = createRemoteRecognizer({ url: 'http://127.0.0.1:9/v1', model: 'whisper-1', language: 'vi', apiKey: null, timeoutMs: 2000 });
  const file = path.join(dir, 'short.wav');
  writeFileSync(file, recording());
  await t.throwsAsync(() => recognizer.transcribe({ file, seconds: 5 }), { name: 'AsrUnavailableError', message: /could not be reached/ });
});
