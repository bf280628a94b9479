/**
 * The money side of one synthesis: charge before the engine starts, wait for
 * its first audio, and afterwards keep or refund the charge by how the run
 * ended (SPEC Billing rules: refunded when no audio is produced or a stream
 * is cut short; a client that disconnects is still charged).
 */
import type { Charge, RequestBilling } from '../../core/billing/service.ts';
import { CLIENT_CLOSED_REQUEST, type OutcomeAnnotation } from '../../core/http/outcome.ts';
import type { SpeechEngine, SynthesisRequest } from '../../core/ports/engine.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { ApiError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { SpeechRun, type FirstEvent, type RunEnd } from './synthesis.ts';

export interface BillingScope {
  billing: RequestBilling;
  outcome: OutcomeAnnotation;
  /** fires at the shutdown deadline: runs still going end early and are refunded */
  stopping?: AbortSignal;
}

/** Status and message when the engine fails before any audio, per route. */
export interface EarlyFailure {
  /** the engine failed (EngineUnavailableError is always 503) */
  failed: () => ApiError;
  /** no audio within the wait: the run is abandoned */
  silent: () => ApiError;
}

export interface StartedRun {
  run: SpeechRun;
  charge: Charge;
  /** `gone`: the client disconnected before the first audio (still charged) */
  first: FirstEvent | 'gone';
}

export interface StartInput {
  engine: SpeechEngine;
  billingEngine: string;
  tokens: number;
  request: Omit<SynthesisRequest, 'signal'>;
  abandonMs: number;
  /** how long to hold the response back for the first audio */
  waitMs: number;
  clientGone: AbortSignal;
  /** a run that ends without any audio is the route's failure (refunded) rather than an empty body */
  emptyIsFailure: boolean;
  failures: EarlyFailure;
  logger: Logger;
}

/** Refunds the charge and records the failure on the outcome. */
async function refund(scope: BillingScope, charge: Charge, errorCode: string): Promise<void> {
  await scope.billing.refund(charge);
  scope.outcome.errorCode = errorCode;
}

/**
 * Charges, starts the engine and waits for its first audio (or `waitMs`).
 * When it fails before any audio the charge is refunded and the route's
 * error is thrown; nothing has been sent yet, so it can still be a status.
 */
export async function chargeAndStart(scope: BillingScope, input: StartInput): Promise<StartedRun> {
  // A client that left while the request waited (for a synthesis or stream slot, or for its charge) gets no audio,
  // so it pays nothing (SPEC Billing 3); a disconnect once the engine has started is charged, as SPEC says.
  const left = () => new ApiError(CLIENT_CLOSED_REQUEST, 'The client closed the request before synthesis started; nothing was charged.', { code: 'CLIENT_CLOSED_REQUEST' });
  if (input.clientGone.aborted) throw left();
  const charge = await scope.billing.charge({ engine: input.billingEngine, tokens: input.tokens });
  if (input.clientGone.aborted) {
    await scope.billing.refund(charge);
    throw left();
  }
  const run = new SpeechRun(input.engine, input.request, { abandonMs: input.abandonMs, clientGone: input.clientGone, interrupt: scope.stopping });
  let first: StartedRun['first'];
  try {
    first = await run.prime(input.waitMs);
  } catch (err) {
    scope.outcome.genMs = run.genMs;
    if (run.end === 'client_gone') return { run, charge, first: 'gone' };
    if (run.end === 'abandoned') {
      await refund(scope, charge, 'synthesis_timeout');
      throw input.failures.silent();
    }
    input.logger.warn('synthesis failed before any audio', { err: err as Error });
    if (err instanceof EngineUnavailableError) {
      await refund(scope, charge, 'synthesis_unavailable');
      throw new ApiError(503, 'No synthesis worker is available for this voice right now. Retry shortly; the tokens were refunded.', { usageCode: 'synthesis_unavailable' });
    }
    await refund(scope, charge, 'synthesis_failed');
    throw input.failures.failed();
  }
  if (first === 'empty' && input.emptyIsFailure) {
    scope.outcome.genMs = run.genMs;
    await refund(scope, charge, 'synthesis_failed');
    throw input.failures.failed();
  }
  return { run, charge, first };
}

/**
 * Settles a run that was streamed: records audio seconds and generation
 * time, and refunds when the audio is incomplete (or, with `refundEmpty`,
 * when a complete run carried no samples at all).
 */
export async function settleRun(scope: BillingScope, started: StartedRun, end: RunEnd, options: { refundEmpty: boolean; logger: Logger }): Promise<boolean> {
  const { run, charge } = started;
  scope.outcome.audioSeconds = run.seconds;
  scope.outcome.genMs = run.genMs;
  const empty = end === 'complete' && options.refundEmpty && run.samples === 0;
  if (end !== 'failed' && end !== 'abandoned' && !empty) return false;
  if (run.error) options.logger.warn('synthesis failed mid-stream', { err: run.error as Error });
  scope.outcome.failedAfterResponse = true;
  await refund(scope, charge, end === 'abandoned' ? 'synthesis_timeout' : run.interrupted ? 'synthesis_unavailable' : 'synthesis_failed');
  return true;
}
