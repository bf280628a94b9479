import type { OutcomeEvent } from '../ports/analytics.ts';
import type { LedgerEntry } from '../ports/grants.ts';

/**
 * The log phase. Plugins annotate `ctx.state.outcome`; core publishes one
 * event per tracked request after the response has fully ended (streams
 * included), so no plugin can forget to.
 */
/** The per-request fields of the outcome event a plugin may set. */
type AnnotatedFields =
  | 'grantId' | 'tokensCharged' | 'tokensRefunded' | 'characters' | 'audioSeconds' | 'genMs'
  | 'voice' | 'voiceName' | 'engine' | 'errorCode' | 'cacheHit' | 'queued' | 'jobId';

export interface OutcomeAnnotation extends Pick<OutcomeEvent, AnnotatedFields> {
  route: string;
  tracked: boolean;
  /** rate-limited calls never reach the ledger */
  skip: boolean;
  /** the response was sent but the work failed afterwards (stream cut short) */
  failedAfterResponse: boolean;
  /** work that must settle before the event is published (e.g. a stream's refund) */
  pending: Promise<unknown>[];
  /**
   * when the request took effect, where a durable record of it keeps that
   * time (a job's acceptance); null: when the event is published. An event
   * rebuilt from the record after a crash then has the same time and id,
   * and replaces the request's own in usage instead of counting twice.
   */
  at: string | null;
  /**
   * Work that waits until the event is on the bus, and is skipped when its
   * publish failed: clearing a durable mark that, should the process stop
   * first, makes a recovery publish the event in the request's place (a
   * job's publication, plugins/jobs/publication.ts).
   */
  afterPublished: Array<() => Promise<unknown>>;
}

export function newOutcome(route: string, tracked: boolean): OutcomeAnnotation {
  return {
    route, tracked, skip: false, grantId: null, tokensCharged: 0, tokensRefunded: 0, characters: 0, audioSeconds: 0,
    genMs: null, voice: null, voiceName: null, engine: null, errorCode: null, cacheHit: false, queued: false, jobId: null,
    failedAfterResponse: false, pending: [], at: null, afterPublished: [],
  };
}

/**
 * The outcome of a request its process's crash cut off, from its held
 * charge (hold-recovery.ts): an error, refunded in full. What the request
 * itself knew (characters, voice, audio) died with it.
 */
export function cutOffOutcomeEvent(charge: LedgerEntry, at: Date): OutcomeEvent {
  return {
    id: outcomeIdOf(charge.requestId ?? charge.id), at: at.toISOString(), requestId: charge.requestId ?? charge.id,
    accountId: charge.accountId, keyId: charge.keyId, grantId: charge.grantId, route: charge.route, status: 500, result: 'error',
    tokensCharged: charge.tokens, tokensRefunded: charge.tokens, characters: 0, audioSeconds: 0, genMs: null,
    voice: null, voiceName: null, engine: null, errorCode: 'synthesis_failed', cacheHit: false, queued: false, jobId: null,
  };
}

/** nginx's status for a request the client abandoned before the answer: not a refusal, not our failure. */
export const CLIENT_CLOSED_REQUEST = 499;

export function resultOf(status: number, o: OutcomeAnnotation): OutcomeEvent['result'] {
  if (status >= 500 || o.failedAfterResponse) return 'error';
  // A client that left before the answer, after its work was accepted and paid for (a queued job), got that work:
  // the event says what was done, with the 499 beside it. Nothing kept, nothing done: a denial like any other.
  const keptCharge = status === CLIENT_CLOSED_REQUEST && o.tokensCharged > o.tokensRefunded;
  if (status >= 400 && !keptCharge) return 'denied';
  if (o.cacheHit) return 'cache_hit';
  if (o.queued) return 'queued';
  return 'ok';
}

/**
 * One outcome per request, its id derived from the request's: a second
 * account of the same request (hold-recovery.ts, after a crash) replaces
 * the first in usage instead of counting the request twice.
 */
export const outcomeIdOf = (requestId: string): string => `out_${requestId}`;

export function buildOutcomeEvent(input: {
  requestId: string;
  accountId: string | null;
  keyId: string | null;
  status: number;
  outcome: OutcomeAnnotation;
  errorCode: string | null;
}): OutcomeEvent {
  const o = input.outcome;
  const result = resultOf(input.status, o);
  // A 503 no route named otherwise (capacity used up: STREAM_BUSY, SPEECH_BUSY) synthesised nothing: unavailable, not failed.
  const failure = input.status === 503 ? 'synthesis_unavailable' : 'synthesis_failed';
  const errorCode = o.errorCode ?? input.errorCode ?? (result === 'denied' ? `http_${input.status}` : result === 'error' ? failure : null);
  return {
    id: outcomeIdOf(input.requestId),
    at: o.at ?? new Date().toISOString(),
    requestId: input.requestId,
    accountId: input.accountId,
    keyId: input.keyId,
    grantId: o.grantId,
    route: o.route,
    status: input.status,
    result,
    tokensCharged: o.tokensCharged,
    tokensRefunded: o.tokensRefunded,
    // A refusal speaks and bills nothing: its text is not usage, however far the route got before refusing (a stream slot).
    characters: result === 'denied' ? 0 : o.characters,
    audioSeconds: Math.round(o.audioSeconds * 1000) / 1000,
    genMs: o.genMs,
    voice: o.voice,
    voiceName: o.voiceName,
    engine: o.engine,
    errorCode: result === 'ok' || result === 'queued' || result === 'cache_hit' ? null : errorCode,
    cacheHit: o.cacheHit,
    queued: o.queued,
    jobId: o.jobId,
  };
}
