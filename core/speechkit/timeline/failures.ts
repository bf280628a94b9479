/**
 * How a render that was already paid for failed, as the refusal the API
 * answers with after the refund: no worker for the voice is 503, a render
 * cut by shutdown is 503 (retry), an audio store out of reach or a full disk
 * is 503 with Retry-After, as core answers it elsewhere; anything else is 500.
 */
import { DomainError } from '../../errors.ts';
import { EngineUnavailableError } from '../../ports/engine.ts';
import { EncoderUnavailableError } from '../audio/ffmpeg.ts';
import { isAbortError } from '../abort.ts';
import { isUnreachableDependency, UNREACHABLE_RETRY_SECONDS } from '../../unreachable.ts';

export function renderFailure(err: unknown, refunded: boolean): DomainError {
  const tail = refunded ? ' The tokens were refunded.' : ' Nothing was charged.';
  if (err instanceof DomainError) return err;
  if (err instanceof EngineUnavailableError || err instanceof EncoderUnavailableError) {
    return new DomainError('unavailable', `No synthesis worker is available for this voice right now. Retry shortly.${tail}`, { usageCode: 'synthesis_unavailable' });
  }
  if (isAbortError(err)) {
    return new DomainError('unavailable', `The render was stopped because the server is shutting down. Retry shortly.${tail}`, { usageCode: 'synthesis_unavailable' });
  }
  if (isUnreachableDependency(err)) {
    return new DomainError('unavailable', `The audio cannot be stored right now. Retry in a few seconds.${tail}`, {
      code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: UNREACHABLE_RETRY_SECONDS, usageCode: 'synthesis_unavailable',
    });
  }
  return new DomainError('failed', `Synthesis failed.${tail}`, { usageCode: 'synthesis_failed' });
}
