/**
 * In-process recogniser on sherpa-onnx (k2-fsa's Next-gen Kaldi runtime,
 * prebuilt for Linux, macOS and Windows in the npm package, no network at
 * run time). The recording is decoded to 16 kHz mono, cut into utterances
 * at its pauses (which gives each segment its timing), and each utterance is
 * decoded by the model off the event loop (`decodeAsync`).
 */
import { createRequire } from 'node:module';
import { decodeToPcm } from '../../../core/speechkit/audio/decode.ts';
import { pcm16ToFloat } from '../../../core/speechkit/audio/pcm.ts';
import { speechSpans } from '../../../core/speechkit/timeline/activity.ts';
import { throwIfAborted } from '../../../core/speechkit/abort.ts';
import { detectModelLayout, type ModelLayout } from './model-dir.ts';
import { AsrUnavailableError, tidySegments, type SpeechRecognizer, type Transcript, type TranscribeInput } from './port.ts';

const RATE = 16_000;
/** Whisper takes at most 30 s at once; transducers are happier with short utterances too. */
const MAX_UTTERANCE_SECONDS = 25;

/** The part of sherpa-onnx-node's API this adapter uses. */
interface SherpaStream {
  acceptWaveform(wave: { samples: Float32Array; sampleRate: number }): void;
}
interface SherpaRecognizer {
  createStream(): SherpaStream;
  decodeAsync(stream: SherpaStream): Promise<{ text?: string; lang?: string }>;
}
interface SherpaModule {
  OfflineRecognizer: { createAsync(config: unknown): Promise<SherpaRecognizer> };
}

export function recognizerConfig(layout: ModelLayout, language: string, threads: number): unknown {
  const model = layout.kind === 'transducer'
    ? { transducer: { encoder: layout.encoder, decoder: layout.decoder, joiner: layout.joiner } }
    : { whisper: { encoder: layout.encoder, decoder: layout.decoder, language, task: 'transcribe' } };
  return {
    featConfig: { sampleRate: RATE, featureDim: 80 },
    // Naming the model type skips sherpa-onnx's metadata probe, which exits the process on a model without `model_type`.
    modelConfig: { ...model, ...(layout.kind === 'transducer' ? { modelType: 'transducer' } : {}), tokens: layout.tokens, numThreads: threads, provider: 'cpu', debug: 0 },
    decodingMethod: 'greedy_search',
  };
}

export interface SherpaOptions {
  dir: string;
  language: string;
  threads: number;
}

/**
 * Checks the directory at once (a wrong ASR_MODEL stops start-up) and loads
 * the model in the background; until it has loaded, or when it failed to,
 * transcription answers AsrUnavailableError saying why.
 */
export function createSherpaRecognizer(options: SherpaOptions): SpeechRecognizer & { loaded: Promise<void> } {
  const layout = detectModelLayout(options.dir);
  let recognizer: SherpaRecognizer | null = null;
  let failure: Error | null = null;
  const loaded = (async () => {
    try {
      const sherpa = createRequire(import.meta.url)('sherpa-onnx-node') as SherpaModule;
      recognizer = await sherpa.OfflineRecognizer.createAsync(recognizerConfig(layout, options.language, options.threads));
    } catch (err) {
      failure = new AsrUnavailableError(`The speech model in ${options.dir} could not be loaded: ${(err as Error).message}`, { cause: err });
      throw failure;
    }
  })();
  loaded.catch(() => undefined);

  return {
    name: 'sherpa-onnx',
    loaded,
    async transcribe(input: TranscribeInput): Promise<Transcript> {
      if (failure) throw failure;
      if (!recognizer) {
        await loaded.catch(() => undefined);
        if (failure) throw failure;
      }
      const pcm = await decodeToPcm(input.file, RATE, input.signal);
      const segments = [];
      for (const span of speechSpans(pcm, RATE, { maxSpanSeconds: MAX_UTTERANCE_SECONDS })) {
        throwIfAborted(input.signal);
        const stream = recognizer!.createStream();
        stream.acceptWaveform({ samples: pcm16ToFloat(pcm.subarray(span.start * 2, span.end * 2)), sampleRate: RATE });
        const result = await recognizer!.decodeAsync(stream);
        segments.push({ start: span.start / RATE, end: span.end / RATE, text: result.text ?? '' });
      }
      return { language: options.language, segments: tidySegments(segments, input.seconds) };
    },
    async close() {
      recognizer = null;
    },
  };
}
