/**
 * The logic of the three synchronous speech routes, no Koa in here: each
 * method checks everything that can be refused (before billing), charges,
 * starts the engine, waits for its first audio, and returns the response
 * headers with a `send` that streams the body, settles the charge by how
 * the stream ended, and then ends the body.
 */
import type { Writable } from 'node:stream';
import type { Config } from '../../config/load.ts';
import type { Logger } from '../../core/logger.ts';
import type { VoiceCatalog } from '../../core/catalog.ts';
import type { BillingService } from '../../core/billing/service.ts';
import type { SpeechEngine } from '../../core/ports/engine.ts';
import type { JobsStore } from '../../core/ports/jobs.ts';
import type { Blobs } from '../../core/ports/blobs.ts';
import type { Counters } from '../../core/ports/counters.ts';
import type { AuthContext } from '../../core/http/auth.ts';
import type { OutcomeAnnotation } from '../../core/http/outcome.ts';
import type { VoiceProfile } from '../../core/ports/engine.ts';
import { ApiError } from '../../core/errors.ts';
import { compatBody, nativeBody } from '../../core/http/envelopes.ts';
import { preflightSynthesis, type SynthesisPrice } from '../../core/http/synthesis-preflight.ts';
import { CONTENT_TYPES, canEncode } from '../../core/speechkit/audio/index.ts';
import { prepareForRequest } from '../../core/speechkit/text/speech-text-request.ts';
import type { AgentSpeechBody, AgentSpeechQuery, AudioSpeechBody, TtsStreamBody } from './schemas.ts';
import { checkStreamFormat, chooseOutput, clampSpeed, compatEngine } from './options.ts';
import { chargeAndStart, settleRun, type BillingScope, type EarlyFailure, type StartedRun } from './billing-run.ts';
import { ResponseSink } from './sink.ts';
import { finishAudio, finishSse, finishWholeWav, runFailure, sendWholeWav, streamAudio, streamSse } from './audio-stream.ts';
import { FrameStream } from './stream-session.ts';
import { streamFormatName } from './stream-frames.ts';
import { SavedCopy } from './saved-copy.ts';
import { acquireStreamSlots, type HeldSlots } from './slots.ts';
import { createSpeechGate } from './gate.ts';
import type { RunEnd } from './synthesis.ts';

export interface RequestScope extends BillingScope {
  auth: AuthContext;
  /** the response body; nothing is written to it before the service returns */
  out: Writable;
}

export interface Delivery {
  headers: Record<string, string>;
  /** streams the body, settles billing, ends the body; never throws (the status is already sent) */
  send(): Promise<void>;
}

/** How long the voice-agent route waits for a worker's first audio before answering 503. */
export const AGENT_FIRST_AUDIO_SECONDS = 10;
/** The compatible route's headerless PCM default (SPEC Audio formats). */
const COMPAT_PCM_RATE = 24_000;

interface BodySteps {
  write(): Promise<RunEnd>;
  finish(end: RunEnd): Promise<void>;
  /** a complete run without samples is refunded too (`/tts/stream`: marker but only heartbeats) */
  refundEmpty?: boolean;
  afterSettle?(end: RunEnd, refunded: boolean): Promise<void>;
  release?(): Promise<void>;
}

const withRefund = (what: string) => `${what}; the tokens were refunded.`;

/** The services the speech routes use. */
export interface SpeechDeps {
  config: Config;
  logger: Logger;
  catalog: VoiceCatalog;
  billing: BillingService;
  engine: SpeechEngine;
  jobs: JobsStore;
  blobs: Blobs;
  counters: Counters;
}

export function createSpeechService(services: SpeechDeps) {
  const { catalog, config, logger } = services;
  const abandonMs = config.limits.streamAbandonSeconds * 1000;
  const heartbeatMs = config.limits.streamHeartbeatSeconds * 1000;
  const gate = createSpeechGate(services.counters.slots, config.limits.speech);
  const silentFor = (seconds: number) => () =>
    new ApiError(503, withRefund(`No audio was produced within ${seconds} seconds. Retry shortly`), { usageCode: 'synthesis_timeout' });

  /**
   * The checks before billing, cheapest first: the word cap and whether any
   * grant can pay (a few reads), then the text as the engine reads it
   * (refined when asked, always prepared, off the event loop when long):
   * 400 when nothing is speakable or it would read far longer than it bills.
   */
  async function admit(scope: RequestScope, input: { text: string; engine: string; aiRefine: boolean; param: string }): Promise<{ price: SynthesisPrice; text: string }> {
    const price = await preflightSynthesis(services.billing, scope.auth, input);
    const prepared = await prepareForRequest({
      text: input.text, aiRefine: input.aiRefine, moderationTerms: config.moderationTerms, sourceCharacters: price.characters, param: input.param,
    });
    return { price, text: prepared.text };
  }

  /** Usage files the request under its voice as soon as the voice is known, so a refusal is filed as on `POST /tts`. */
  function annotate(outcome: OutcomeAnnotation, voice: VoiceProfile, engine: string): void {
    Object.assign(outcome, { voice: voice.id, voiceName: voice.name, engine });
  }

  function delivery(scope: RequestScope, sink: ResponseSink, started: StartedRun, headers: Record<string, string>, steps: BodySteps): Delivery {
    return {
      headers,
      async send() {
        let end: RunEnd = 'failed';
        try {
          end = started.first === 'gone' ? 'client_gone' : await steps.write();
        } catch (err) {
          logger.error('speech body failed', { err: err as Error });
          started.run.stop('failed');
        }
        let wasRefunded = false;
        try {
          wasRefunded = await settleRun(scope, started, end, { refundEmpty: steps.refundEmpty ?? false, logger });
        } catch (err) {
          logger.error('speech stream could not be settled', { err: err as Error });
        }
        // The saved copy is closed whatever happened to the settlement: left open it would be kept alive until its lifetime ran out.
        try {
          await steps.afterSettle?.(end, wasRefunded);
        } catch (err) {
          logger.error('saved copy could not be closed', { err: err as Error });
        }
        try {
          await steps.finish(end);
        } catch {
          sink.cut();
        }
        await steps.release?.().catch((err: unknown) => logger.warn('stream slots not released', { err: err as Error }));
      },
    };
  }

  /**
   * Runs `start` (charge, engine, first audio) once this key, its account
   * and the process have a free synthesis slot (issue 9); the slot is held
   * until the body has been sent, and freed at once when `start` throws.
   */
  async function gated(scope: RequestScope, start: () => Promise<Delivery>): Promise<Delivery> {
    const pass = await gate.enter(scope.auth);
    let started: Delivery;
    try {
      started = await start();
    } catch (err) {
      await pass.release();
      throw err;
    }
    return {
      headers: started.headers,
      send: () => started.send().finally(() => pass.release().catch((err: unknown) => logger.warn('speech slots not released', { err: err as Error }))),
    };
  }

  return {
    async audioSpeech(body: AudioSpeechBody, scope: RequestScope): Promise<Delivery> {
      const engine = compatEngine(body, catalog);
      checkStreamFormat(body.stream_format, body.response_format ?? 'mp3');
      const output = chooseOutput({
        format: body.response_format, sampleRate: body.sample_rate, defaultFormat: 'mp3', pcmDefaultRate: COMPAT_PCM_RATE,
        params: { format: 'response_format', sampleRate: 'sample_rate' },
      }, canEncode);
      const voice = await catalog.resolve({ voice: body.voice, engine, accountId: scope.auth.accountId, allowClones: false, param: 'voice' });
      annotate(scope.outcome, voice, engine);
      const { price, text } = await admit(scope, { text: body.input, engine, aiRefine: body.aiRefine, param: 'input' });
      scope.outcome.characters = price.characters;

      return gated(scope, async () => {
        const sink = new ResponseSink(scope.out, abandonMs);
        const speed = clampSpeed(body.speed);
        const started = await chargeAndStart(scope, {
          engine: services.engine, billingEngine: engine, tokens: price.tokens, request: { text, voice, speed, sampleRate: output.sampleRate },
          abandonMs, waitMs: abandonMs + 1000, clientGone: sink.clientGone, emptyIsFailure: true, logger,
          failures: {
            failed: () => new ApiError(500, withRefund('Synthesis failed. Retry shortly'), { usageCode: 'synthesis_failed' }),
            silent: silentFor(config.limits.streamAbandonSeconds),
          },
        });

        const sse = body.stream_format === 'sse';
        let copy: SavedCopy | null = null;
        if (!body.stream_format && started.first !== 'gone') {
          try {
            copy = await SavedCopy.start({ jobs: services.jobs, blobs: services.blobs, logger }, {
              accountId: scope.auth.accountId, keyId: scope.auth.keyId, text: body.input, voiceId: voice.id, voiceName: voice.name, engine, speed,
              aiRefine: body.aiRefine, characters: price.characters, charge: started.charge, format: output.format, sampleRate: output.sampleRate,
            });
          } catch (err) {
            started.run.stop('failed');
            await scope.billing.refund(started.charge);
            throw err;
          }
        }
        const headers: Record<string, string> = { 'Content-Type': sse ? 'text/event-stream' : CONTENT_TYPES[output.format], 'Cache-Control': 'no-store' };
        if (output.format === 'pcm' || output.format === 'ulaw') headers['X-Sample-Rate'] = String(output.sampleRate);
        if (copy) headers['X-Service-Job-Id'] = copy.jobId;
        const audio = { format: output.format, sampleRate: output.sampleRate };
        return delivery(scope, sink, started, headers, {
          write: () => (sse ? streamSse(started.run, sink, audio)
            : copy && output.format === 'wav' ? sendWholeWav(started.run, sink, audio, copy) : streamAudio(started.run, sink, audio, copy)),
          finish: (end) => (sse ? finishSse(end, started.run, sink) : copy && output.format === 'wav' ? finishWholeWav(end, sink, copy)
            : finishAudio(end, sink, (cut) => ({ status: 500, body: compatBody(runFailure(cut)) }))),
          async afterSettle(end, wasRefunded) {
            if (!copy) return;
            if (end === 'complete') await copy.complete(started.run.seconds, started.run.genMs ?? 0);
            else await copy.fail('synthesis_failed', end === 'client_gone' ? 'The client disconnected before the audio was complete.' : 'Synthesis failed mid-stream.', wasRefunded);
          },
        });
      });
    },

    async ttsStream(body: TtsStreamBody, scope: RequestScope): Promise<Delivery> {
      const engine = catalog.resolveEngine(body.engine);
      if (!catalog.engines().find((e) => e.key === engine)?.features.includes('stream')) {
        throw new ApiError(400, `Engine ${engine} does not stream; use POST /tts.`, { param: 'engine', code: 'STREAM_UNSUPPORTED' });
      }
      const output = chooseOutput({
        format: body.outputFormat, sampleRate: body.sampleRate, defaultFormat: 'wav', pcmDefaultRate: 48_000,
        params: { format: 'outputFormat', sampleRate: 'sampleRate' },
      }, canEncode);
      const voice = await catalog.resolve({ voice: body.voiceId, engine, accountId: scope.auth.accountId, allowClones: true, param: 'voiceId' });
      annotate(scope.outcome, voice, engine);
      const { price, text } = await admit(scope, { text: body.text, engine, aiRefine: body.aiRefine, param: 'text' });
      scope.outcome.characters = price.characters;

      const slots: HeldSlots = await acquireStreamSlots(services.counters.slots, scope.auth.grantId, config.limits);
      const sink = new ResponseSink(scope.out, abandonMs);
      const wav = output.format === 'wav';
      let started: StartedRun;
      try {
        started = await chargeAndStart(scope, {
          engine: services.engine, billingEngine: engine, tokens: price.tokens,
          request: { text, voice, speed: body.speed, sampleRate: output.sampleRate },
          // Held back no longer than one heartbeat: a slow start is answered with heartbeats, not silence.
          abandonMs, waitMs: Math.min(heartbeatMs, abandonMs / 2), clientGone: sink.clientGone, emptyIsFailure: false, logger,
          failures: {
            failed: () => new ApiError(502, withRefund('Every synthesis worker failed before producing audio. Retry, or use POST /tts'), { usageCode: 'synthesis_failed' }),
            silent: silentFor(config.limits.streamAbandonSeconds),
          },
        });
      } catch (err) {
        await slots.release();
        throw err;
      }
      const headers: Record<string, string> = {
        'Content-Type': 'application/octet-stream',
        'Cache-Control': 'no-store',
        'X-Sample-Rate': String(output.sampleRate),
        'X-Output-Format': output.format,
        'X-Stream-Format': streamFormatName(output.format),
      };
      if (wav) headers['X-Stream-Heartbeat'] = String(config.limits.streamHeartbeatSeconds);
      const frames = new FrameStream(started.run, sink, { format: output.format, sampleRate: output.sampleRate, heartbeatMs: wav ? heartbeatMs : null });
      return delivery(scope, sink, started, headers, {
        write: () => frames.send(started.first === 'waiting'),
        finish: (end) => frames.finish(end),
        refundEmpty: true,
        release: () => slots.release(),
      });
    },

    async agentSpeech(query: AgentSpeechQuery, body: AgentSpeechBody, scope: RequestScope): Promise<Delivery> {
      const engine = catalog.resolveEngine(query.engine);
      const { text: input, sampleRate } = body.message;
      const voice = await catalog.resolve({ voice: query.voiceId, engine, accountId: scope.auth.accountId, allowClones: false, param: 'voiceId' });
      annotate(scope.outcome, voice, engine);
      // SPEC: aiRefine is never applied on this route.
      const { price, text } = await admit(scope, { text: input, engine, aiRefine: false, param: 'message.text' });
      scope.outcome.characters = price.characters;

      return gated(scope, async () => {
        const sink = new ResponseSink(scope.out, abandonMs);
        const noAudio = () => new ApiError(502, 'The synthesis worker produced no audio; the tokens were refunded.', { bare: true, usageCode: 'synthesis_failed' });
        const deadlineSeconds = Math.min(AGENT_FIRST_AUDIO_SECONDS, config.limits.streamAbandonSeconds);
        const noWorker: EarlyFailure['silent'] = silentFor(deadlineSeconds);
        const started = await chargeAndStart(scope, {
          engine: services.engine, billingEngine: engine, tokens: price.tokens, request: { text, voice, speed: 1, sampleRate },
          abandonMs, waitMs: deadlineSeconds * 1000, clientGone: sink.clientGone, emptyIsFailure: true, logger,
          failures: { failed: noAudio, silent: noWorker },
        });
        if (started.first === 'waiting') {
          started.run.stop('abandoned');
          await scope.billing.refund(started.charge);
          scope.outcome.errorCode = 'synthesis_timeout';
          throw noWorker();
        }
        const headers = { 'Content-Type': 'application/octet-stream', 'Cache-Control': 'no-store', 'X-Sample-Rate': String(sampleRate) };
        return delivery(scope, sink, started, headers, {
          write: () => streamAudio(started.run, sink, { format: 'pcm', sampleRate }, null),
          // noAudio is bare ({ statusCode, message }): no trace id goes in it.
          finish: (end) => finishAudio(end, sink, () => ({ status: 502, body: nativeBody(noAudio(), '') })),
        });
      });
    },
  };
}

export type SpeechService = ReturnType<typeof createSpeechService>;
