import { DomainError } from '../errors.ts';
import type { Assessment } from './assessment.ts';

/**
 * Maps why nobody could pay to SPEC's refusal. `ownAssessment` is the key's
 * own grant (null when it no longer exists); `othersExist` says whether any
 * other active grant of the account covers the engine.
 */
export function refusalFor(ownAssessment: Assessment | null, othersExist: boolean, required: number): DomainError {
  const ownInactive =
    ownAssessment === null ||
    (!ownAssessment.canPay && ['inactive', 'expired', 'used_up'].includes(ownAssessment.reason));
  if (ownInactive && !othersExist) {
    return new DomainError('forbidden', 'The grant that pays for this key or connected app is used up, expired or replaced, and no other active grant of the account covers this engine.', {
      code: 'GRANT_INACTIVE',
      required,
    });
  }
  if (ownAssessment === null || ownAssessment.canPay) {
    return new DomainError('forbidden', 'No grant of the account can pay for this request.', { code: 'GRANT_TOKENS_EXHAUSTED', remaining: 0, required });
  }
  // Under the limit that refused, not the tightest of all: a grant short of tokens reports its balance, not its day's cap.
  const remaining = ownAssessment.limitRemaining;
  switch (ownAssessment.reason) {
    case 'expired':
      return new DomainError('forbidden', 'The grant has expired. Renew the plan to continue.', { code: 'GRANT_EXPIRED' });
    case 'daily':
      return new DomainError('limited', 'The daily token cap of the grant is spent.', {
        code: 'GRANT_DAILY_LIMIT', resetAt: ownAssessment.resetAt ?? undefined, remaining, required,
      });
    case 'weekly':
      return new DomainError('limited', 'The weekly token cap of the grant is spent.', {
        code: 'GRANT_WEEKLY_LIMIT', resetAt: ownAssessment.resetAt ?? undefined, remaining, required,
      });
    case 'engine':
      return new DomainError('forbidden', 'The plan does not include this engine.', { code: 'PLAN_ENGINE_NOT_INCLUDED', required });
    default:
      return new DomainError('forbidden', 'The grant has too few tokens left for this request.', {
        code: 'GRANT_TOKENS_EXHAUSTED', remaining, required,
      });
  }
}

export function concurrentConflict(): DomainError {
  return new DomainError('limited', 'Another request of yours is being charged to the same balance. Retry in one second.', {
    code: 'CONCURRENT_CONFLICT',
    retryAfterSeconds: 1,
  });
}
