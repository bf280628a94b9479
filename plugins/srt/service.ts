/**
 * `POST /srt`: a parsed subtitle file becomes one WAV in which each cue's
 * speech starts on the cue's start time. Refusals (text validations,
 * voice, moderation, length) come before the charge; the charge is for the
 * cue text and is refunded when the render fails.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/load.ts';
import type { Logger } from '../../core/logger.ts';
import type { VoiceCatalog } from '../../core/catalog.ts';
import type { BillingService, RequestBilling } from '../../core/billing/service.ts';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { SpeechEngine } from '../../core/ports/engine.ts';
import type { DownloadLinks } from '../../core/downloads.ts';
import type { AuthContext } from '../../core/http/auth.ts';
import type { OutcomeAnnotation } from '../../core/http/outcome.ts';
import { DomainError } from '../../core/errors.ts';
import { countCharacters } from '../../core/billing/pricing.ts';
import { MAX_TEXT_CHARS } from '../../core/http/synthesis-fields.ts';
import { enforceTestKeyWordCap } from '../../core/speechkit/text/word-cap.ts';
import { validateReadableText } from '../../core/speechkit/text/validation.ts';
import { refinePiecesForRequest } from '../../core/speechkit/text/refine.ts';
import { checkText } from '../../core/speechkit/text/prepare.ts';
import { fitClip, fitReport, type FitReport } from '../../core/speechkit/timeline/fit.ts';
import { renderTimeline } from '../../core/speechkit/timeline/render.ts';
import type { SubtitleCue } from './parse.ts';

export const SRT_SAMPLE_RATE = 48_000;
export const LINK_TTL_SECONDS = 86_400;

export interface SrtDeps {
  config: Config;
  logger: Logger;
  catalog: VoiceCatalog;
  billing: BillingService;
  engine: SpeechEngine;
  blobs: Blobs;
  downloads: DownloadLinks;
}

export interface SrtScope {
  auth: AuthContext;
  billing: RequestBilling;
  outcome: OutcomeAnnotation;
  signal: AbortSignal;
}

/** What happened to one cue. */
export interface CueReport extends FitReport {
  index: number;
  start: number;
  end: number;
}

export interface SrtResult {
  srtId: string;
  audioUrl: string;
  audioUrlExpiresIn: number;
  duration: number;
  sampleRate: number;
  characters: number;
  cues: CueReport[];
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * 400 NOTHING_TO_SPEAK before billing when no cue has words: cues of cue tags
 * alone are silence on every engine (SPEC Billing 3). A cue of a tag alone
 * among spoken cues is a pause. Run on the texts as spoken, after aiRefine.
 */
function refuseUnspoken(texts: readonly string[]): void {
  const checks = texts.map((text) => checkText(text));
  if (checks.some((check) => check.spoken)) return;
  const message = checks.some((check) => check.speakable)
    ? 'Every cue of "file" holds only cue tags, which are silent pauses; add words to speak to at least one cue.'
    : 'No cue of the subtitle file contains anything that can be spoken.';
  throw new DomainError('invalid', message, { param: 'file', code: 'NOTHING_TO_SPEAK' });
}
/** HH:MM:SS, as the file writes times. */
const clock = (seconds: number) => [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, Math.floor(seconds) % 60].map((n) => String(n).padStart(2, '0')).join(':');

export function createSrtService(deps: SrtDeps, options: { maxTempo: number; maxSeconds: number }) {
  const { catalog, config } = deps;

  function spokenTexts(cues: SubtitleCue[], aiRefine: boolean): string[] {
    const texts = cues.map((c) => c.text);
    return aiRefine ? refinePiecesForRequest(texts, config.moderationTerms) : texts;
  }

  return {
    async dub(cues: SubtitleCue[], fields: { voiceId?: string | null; engine?: string | null; aiRefine: boolean }, scope: SrtScope): Promise<SrtResult> {
      const engine = catalog.resolveEngine(fields.engine);
      const characters = cues.reduce((n, c) => n + countCharacters(c.text), 0);
      if (characters > MAX_TEXT_CHARS) {
        throw new DomainError('invalid', `The subtitles have ${characters} characters of text; at most ${MAX_TEXT_CHARS} are accepted.`, { param: 'file' });
      }
      const last = cues[cues.length - 1];
      if (last.end > options.maxSeconds) {
        throw new DomainError('invalid', `Cue ${last.index} ends at ${clock(last.end)}; a dubbed subtitle track can last at most ${clock(options.maxSeconds)}. Split the file and dub each part.`, {
          param: 'file', code: 'SRT_TOO_LONG', extra: { cue: last.index },
        });
      }
      const allText = cues.map((c) => c.text).join('\n');
      enforceTestKeyWordCap(scope.auth, allText, 'file');
      validateReadableText(allText, 'file');
      const voice = await catalog.resolve({ voice: fields.voiceId, engine, accountId: scope.auth.accountId, allowClones: true, param: 'voiceId' });
      const texts = spokenTexts(cues, fields.aiRefine);
      refuseUnspoken(texts);
      const tokens = deps.billing.priceCharacters({ characters, engine, aiRefine: fields.aiRefine });
      Object.assign(scope.outcome, { voice: voice.id, voiceName: voice.name, engine, characters });

      const charge = await scope.billing.charge({ engine, tokens });
      const srtId = 'srt_' + randomUUID();
      const key = `srt/${srtId}.wav`;
      const reports: CueReport[] = [];
      const render = { key, sampleRate: SRT_SAMPLE_RATE, what: 'subtitle', refund: () => scope.billing.refund(charge) };
      const stored = await renderTimeline(deps, scope, render, async (timeline, speak) => {
        for (const [i, cue] of cues.entries()) {
          const clip = await speak(texts[i], voice);
          const next = cues[i + 1]?.start ?? null;
          const fitted = await fitClip(timeline, clip.pcm, cue, next, { maxTempo: options.maxTempo, signal: scope.signal });
          reports.push({ index: cue.index, start: cue.start, end: cue.end, ...fitReport(fitted) });
        }
        // The file covers the last cue, even when its speech ended early.
        await timeline.padTo(Math.round(cues[cues.length - 1].end * SRT_SAMPLE_RATE));
      });
      const link = deps.downloads.sign(key, LINK_TTL_SECONDS);
      return {
        srtId, audioUrl: link.url, audioUrlExpiresIn: link.expiresIn, duration: round3(stored.seconds), sampleRate: SRT_SAMPLE_RATE, characters, cues: reports,
      };
    },
  };
}
