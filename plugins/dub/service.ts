/**
 * `POST /dub`: a Vietnamese recording is transcribed (ASR port), and its
 * segments are spoken again with the chosen voice at their source times, so
 * the dub keeps the original timing. Order: fields and voice, ASR
 * configured, what the upload really is (ffprobe), affordability against the
 * upload's own duration; only then transcription and rendering. The charge
 * (65 tokens per output second) happens once the audio is stored.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/load.ts';
import type { Logger } from '../../core/logger.ts';
import type { VoiceCatalog } from '../../core/catalog.ts';
import type { BillingService, RequestBilling } from '../../core/billing/service.ts';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { Documents } from '../../core/ports/documents.ts';
import type { SpeechEngine } from '../../core/ports/engine.ts';
import type { DownloadLinks } from '../../core/downloads.ts';
import type { AuthContext } from '../../core/http/auth.ts';
import type { OutcomeAnnotation } from '../../core/http/outcome.ts';
import { DomainError } from '../../core/errors.ts';
import { countCharacters } from '../../core/billing/pricing.ts';
import { probeUpload, ProbeUnavailableError, UnsupportedAudioError, type ProbedUpload } from '../../core/speechkit/audio/probe.ts';
import { fitClip, fitReport, type FitReport } from '../../core/speechkit/timeline/fit.ts';
import { renderTimeline } from '../../core/speechkit/timeline/render.ts';
import { AsrFailedError, AsrUnavailableError, type SpeechRecognizer, type Transcript } from './asr/port.ts';
import { assertAffordable } from './affordability.ts';
import { UNREACHABLE_RETRY_SECONDS } from '../../core/unreachable.ts';
import { dubPriceTokens } from './pricing.ts';
import type { DubFields } from './schemas.ts';

export const DUB_SAMPLE_RATE = 48_000;
export const LINK_TTL_SECONDS = 86_400;

export interface DubDeps {
  config: Config;
  logger: Logger;
  catalog: VoiceCatalog;
  billing: BillingService;
  documents: Documents;
  engine: SpeechEngine;
  blobs: Blobs;
  downloads: DownloadLinks;
}

export interface DubOptions {
  recognizer: SpeechRecognizer | null;
  maxSeconds: number;
  maxTempo: number;
}

export interface DubScope {
  auth: AuthContext;
  billing: RequestBilling;
  outcome: OutcomeAnnotation;
  signal: AbortSignal;
}

export interface AlignmentReport extends FitReport {
  /** segment number in the transcript, from 0 */
  index: number;
  start: number;
  end: number;
}

export interface DubResult {
  dubId: string;
  audioUrl: string;
  audioUrlExpiresIn: number;
  duration: number;
  sampleRate: number;
  voiceId: string;
  transcript: { language: string | null; duration: number; text: string; segments: Array<{ start: number; end: number; text: string }> };
  alignment: AlignmentReport[];
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

function asrNotConfigured(): DomainError {
  return new DomainError('unavailable', 'Dubbing needs speech recognition, and none is configured on this server: set ASR_URL (an OpenAI-compatible transcription server) or ASR_MODEL (a local sherpa-onnx model directory). Nothing was charged.', {
    code: 'ASR_NOT_CONFIGURED', usageCode: 'synthesis_unavailable',
  });
}

function asrRefusal(err: unknown): DomainError | null {
  if (err instanceof AsrUnavailableError) {
    return new DomainError('unavailable', `${err.message} Retry in a few seconds; nothing was charged.`, {
      code: 'ASR_UNAVAILABLE', usageCode: 'synthesis_unavailable', retryAfterSeconds: UNREACHABLE_RETRY_SECONDS,
    });
  }
  if (err instanceof AsrFailedError) {
    return new DomainError('upstream_failed', `Speech recognition failed: ${err.message}. Nothing was charged.`, { code: 'ASR_FAILED', usageCode: 'synthesis_failed' });
  }
  return null;
}

export function createDubService(deps: DubDeps, options: DubOptions) {
  const { catalog, config } = deps;

  async function probe(file: string): Promise<ProbedUpload> {
    try {
      return await probeUpload(file);
    } catch (err) {
      if (err instanceof UnsupportedAudioError) throw new DomainError('invalid', err.message, { param: 'audio', code: 'UNSUPPORTED_AUDIO' });
      if (err instanceof ProbeUnavailableError) throw new DomainError('unavailable', `${err.message}; uploads cannot be checked. Nothing was charged.`, { code: 'PROBE_UNAVAILABLE' });
      throw err;
    }
  }

  async function transcribe(recognizer: SpeechRecognizer, file: string, seconds: number, signal: AbortSignal): Promise<Transcript> {
    try {
      return await recognizer.transcribe({ file, seconds, signal });
    } catch (err) {
      throw asrRefusal(err) ?? err;
    }
  }

  return {
    async dub(file: string, fields: DubFields, scope: DubScope): Promise<DubResult> {
      const engine = catalog.resolveEngine(fields.engine);
      // SPEC: re-synthesised with the chosen preset voice (clones are for /tts and /tts/stream).
      const voice = await catalog.resolve({ voice: fields.voiceId, engine, accountId: scope.auth.accountId, allowClones: false, param: 'voiceId' });
      Object.assign(scope.outcome, { voice: voice.id, voiceName: voice.name, engine });
      const recognizer = options.recognizer;
      if (!recognizer) throw asrNotConfigured();
      const upload = await probe(file);
      if (upload.seconds > options.maxSeconds) {
        throw new DomainError('invalid', `The recording lasts ${Math.round(upload.seconds)} s; at most ${options.maxSeconds} s can be dubbed in one request.`, { param: 'audio', code: 'AUDIO_TOO_LONG' });
      }
      const multiplier = deps.billing.engine(engine)?.billingMultiplier ?? 1;
      await assertAffordable(deps.documents, scope.auth, engine, dubPriceTokens(upload.seconds, multiplier), config.billing.timezoneOffsetMinutes);

      const transcript = await transcribe(recognizer, file, upload.seconds, scope.signal);
      const text = transcript.segments.map((s) => s.text).join(' ');
      scope.outcome.characters = countCharacters(text);
      if (transcript.segments.length === 0) {
        throw new DomainError('invalid', 'No speech was recognised in the recording; nothing was charged.', { param: 'audio', code: 'NO_SPEECH' });
      }

      const dubId = 'dub_' + randomUUID();
      const key = `dubs/${dubId}.wav`;
      const alignment: AlignmentReport[] = [];
      // Nothing is charged yet: the price follows the output's duration.
      const stored = await renderTimeline(deps, scope, { key, sampleRate: DUB_SAMPLE_RATE, what: 'dub' }, async (timeline, speak) => {
        for (const [i, segment] of transcript.segments.entries()) {
          const clip = await speak(segment.text, voice);
          const next = transcript.segments[i + 1]?.start ?? null;
          const fitted = await fitClip(timeline, clip.pcm, segment, next, { maxTempo: options.maxTempo, signal: scope.signal });
          alignment.push({ index: i, start: round3(segment.start), end: round3(segment.end), ...fitReport(fitted) });
        }
        // The dub lasts as long as the recording (longer only when its last segment runs on).
        await timeline.padTo(Math.round(upload.seconds * DUB_SAMPLE_RATE));
      });
      // SPEC Billing rule 4: charged only on success, by the output's duration.
      try {
        await scope.billing.charge({ engine, tokens: dubPriceTokens(stored.seconds, multiplier) });
      } catch (err) {
        await deps.blobs.delete(key).catch(() => undefined);
        throw err;
      }
      const link = deps.downloads.sign(key, LINK_TTL_SECONDS);
      return {
        dubId, audioUrl: link.url, audioUrlExpiresIn: link.expiresIn, duration: stored.seconds, sampleRate: DUB_SAMPLE_RATE, voiceId: voice.id,
        transcript: {
          language: transcript.language, duration: round3(upload.seconds), text,
          segments: transcript.segments.map((s) => ({ start: round3(s.start), end: round3(s.end), text: s.text })),
        },
        alignment,
      };
    },
  };
}
