/**
 * `POST /dialogue`: every check that can refuse runs before the charge
 * (turn count, voices, text validations, moderation); then the turns are
 * spoken in order into one 48 kHz WAV, with a pause between turns, stored
 * behind a 24-hour link. A render that fails is refunded in full.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/load.ts';
import type { Logger } from '../../core/logger.ts';
import type { VoiceCatalog } from '../../core/catalog.ts';
import type { BillingService, RequestBilling } from '../../core/billing/service.ts';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { SpeechEngine, VoiceProfile } from '../../core/ports/engine.ts';
import type { DownloadLinks } from '../../core/downloads.ts';
import type { AuthContext } from '../../core/http/auth.ts';
import type { OutcomeAnnotation } from '../../core/http/outcome.ts';
import { DomainError } from '../../core/errors.ts';
import { countCharacters } from '../../core/billing/pricing.ts';
import { enforceTestKeyWordCap } from '../../core/speechkit/text/word-cap.ts';
import { validateReadableText } from '../../core/speechkit/text/validation.ts';
import { refinePiecesForRequest } from '../../core/speechkit/text/refine.ts';
import { checkText } from '../../core/speechkit/text/prepare.ts';
import { renderTimeline } from '../../core/speechkit/timeline/render.ts';
import { MAX_DIALOGUE_CHARS, type DialogueBody } from './schemas.ts';

export const DIALOGUE_SAMPLE_RATE = 48_000;
export const LINK_TTL_SECONDS = 86_400;

export interface DialogueDeps {
  config: Config;
  logger: Logger;
  catalog: VoiceCatalog;
  billing: BillingService;
  engine: SpeechEngine;
  blobs: Blobs;
  downloads: DownloadLinks;
}

export interface DialogueScope {
  auth: AuthContext;
  billing: RequestBilling;
  outcome: OutcomeAnnotation;
  /** fires when the server must stop (shutdown) */
  signal: AbortSignal;
}

/** Where one turn sits in the file. */
export interface VoiceSegment {
  inputIndex: number;
  voiceId: string;
  /** seconds from the start of the file */
  start: number;
  end: number;
}

export interface DialogueResult {
  dialogueId: string;
  audioUrl: string;
  audioUrlExpiresIn: number;
  duration: number;
  sampleRate: number;
  characters: number;
  voiceSegments: VoiceSegment[];
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * 400 NOTHING_TO_SPEAK before billing: a turn with nothing speakable, or a
 * dialogue whose every turn is cue tags alone, which every engine renders as
 * silence (SPEC Billing 3). A turn of a tag alone among spoken turns is a pause.
 * Run on the texts as spoken, after aiRefine's normalisation.
 */
function refuseUnspoken(texts: readonly string[]): void {
  const checks = texts.map((text, i) => {
    const check = checkText(text);
    if (!check.speakable) {
      throw new DomainError('invalid', `"inputs[${i}].text" contains nothing that can be spoken.`, { param: `inputs[${i}].text`, code: 'NOTHING_TO_SPEAK' });
    }
    return check;
  });
  if (!checks.some((check) => check.spoken)) {
    throw new DomainError('invalid', '"inputs" holds only cue tags, which are silent pauses; add words to speak to at least one turn.', { param: 'inputs', code: 'NOTHING_TO_SPEAK' });
  }
}

export function createDialogueService(deps: DialogueDeps, options: { defaultPauseMs: number }) {
  const { catalog, config } = deps;

  /** The text each turn is spoken from: moderated as a whole and normalised turn by turn when aiRefine asks. */
  function spokenTexts(body: DialogueBody): string[] {
    const texts = body.inputs.map((t) => t.text);
    return body.aiRefine ? refinePiecesForRequest(texts, config.moderationTerms) : texts;
  }

  async function resolveVoices(body: DialogueBody, engine: string, accountId: string): Promise<VoiceProfile[]> {
    const voices: VoiceProfile[] = [];
    for (const [i, t] of body.inputs.entries()) {
      const param = `inputs[${i}].voiceId`;
      try {
        voices.push(await catalog.resolve({ voice: t.voiceId, engine, accountId, allowClones: true, param }));
      } catch (err) {
        // Which of up to 50 turns is wrong: the native envelope has no `param`, so the message says it.
        if (!(err instanceof DomainError) || Array.isArray(err.messages)) throw err;
        throw new DomainError(err.kind, `${param}: ${err.messages}`, err.details);
      }
    }
    return voices;
  }

  return {
    async create(body: DialogueBody, scope: DialogueScope): Promise<DialogueResult> {
      const engine = catalog.resolveEngine(body.engine);
      const characters = body.inputs.reduce((sum, t) => sum + countCharacters(t.text), 0);
      if (characters > MAX_DIALOGUE_CHARS) {
        throw new DomainError('invalid', `The dialogue has ${characters} characters; at most ${MAX_DIALOGUE_CHARS} are accepted.`, { param: 'inputs' });
      }
      enforceTestKeyWordCap(scope.auth, body.inputs.map((t) => t.text).join(' '), 'inputs');
      body.inputs.forEach((t, i) => validateReadableText(t.text, `inputs[${i}].text`));
      const voices = await resolveVoices(body, engine, scope.auth.accountId);
      const texts = spokenTexts(body);
      refuseUnspoken(texts);
      const tokens = deps.billing.priceCharacters({ characters, engine, aiRefine: body.aiRefine });
      Object.assign(scope.outcome, { voice: voices[0].id, voiceName: voices[0].name, engine, characters });

      const charge = await scope.billing.charge({ engine, tokens });
      const dialogueId = 'dlg_' + randomUUID();
      const key = `dialogues/${dialogueId}.wav`;
      const pauseSamples = Math.round(((body.pauseMs ?? options.defaultPauseMs) / 1000) * DIALOGUE_SAMPLE_RATE);
      const segments: VoiceSegment[] = [];
      const render = { key, sampleRate: DIALOGUE_SAMPLE_RATE, what: 'dialogue', refund: () => scope.billing.refund(charge) };
      const stored = await renderTimeline(deps, scope, render, async (timeline, speak) => {
        for (const [i, text] of texts.entries()) {
          const clip = await speak(text, voices[i]);
          if (i > 0) await timeline.padTo(timeline.samples + pauseSamples);
          const placed = await timeline.append(clip.pcm);
          segments.push({ inputIndex: i, voiceId: voices[i].id, start: placed.start / DIALOGUE_SAMPLE_RATE, end: placed.end / DIALOGUE_SAMPLE_RATE });
        }
      });
      const link = deps.downloads.sign(key, LINK_TTL_SECONDS);
      return {
        dialogueId, audioUrl: link.url, audioUrlExpiresIn: link.expiresIn, duration: round3(stored.seconds), sampleRate: DIALOGUE_SAMPLE_RATE,
        characters, voiceSegments: segments.map((s) => ({ ...s, start: round3(s.start), end: round3(s.end) })),
      };
    },
  };
}
