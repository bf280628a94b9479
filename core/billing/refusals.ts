import { ApiError } from '../errors.ts';
import type { Assessment } from './assessment.ts';

/**
 * Maps why nobody could pay to SPEC's refusal. `ownAssessment` is the key's
 * own grant (null when it no longer exists); `othersExist` says whether any
 * other active grant of the account covers the engine.
 */
export function refusalFor(ownAssessment: Assessment | null, othersExist: boolean, required: number): ApiError {
  const ownInactive =
    ownAssessment === null ||
    (!ownAssessment.canPay && ['inactive', 'expired', 'used_up'].includes(ownAssessment.reason));
  if (ownInactive && !othersExist) {
    return new ApiError(403, 'The grant behind this key is used up, expired or replaced, and no other active grant of the account covers this engine.', {
      code: 'GRANT_INACTIVE',
      required,
      compatType: 'insufficient_quota',
    });
  }
  if (ownAssessment === null || ownAssessment.canPay) {
    return new ApiError(403, 'No grant of the account can pay for this request.', { code: 'GRANT_TOKENS_EXHAUSTED', remaining: 0, required, compatType: 'insufficient_quota' });
  }
  const remaining = ownAssessment.spendable;
  switch (ownAssessment.reason) {
    case 'expired':
      return new ApiError(403, 'The grant has expired. Renew the plan to continue.', { code: 'GRANT_EXPIRED', compatType: 'insufficient_quota' });
    case 'daily':
      return new ApiError(429, 'The daily token cap of the grant is spent.', {
        code: 'GRANT_DAILY_LIMIT', resetAt: ownAssessment.resetAt ?? undefined, remaining, required, compatType: 'rate_limit_exceeded',
      });
    case 'weekly':
      return new ApiError(429, 'The weekly token cap of the grant is spent.', {
        code: 'GRANT_WEEKLY_LIMIT', resetAt: ownAssessment.resetAt ?? undefined, remaining, required, compatType: 'rate_limit_exceeded',
      });
    case 'engine':
      return new ApiError(403, 'The plan does not include this engine.', { code: 'PLAN_ENGINE_NOT_INCLUDED', required, compatType: 'authentication_error' });
    default:
      return new ApiError(403, 'The grant has too few tokens left for this request.', {
        code: 'GRANT_TOKENS_EXHAUSTED', remaining, required, compatType: 'insufficient_quota',
      });
  }
}

export function concurrentConflict(): ApiError {
  return new ApiError(429, 'Another request of yours is being charged to the same balance. Retry in one second.', {
    code: 'CONCURRENT_CONFLICT',
    retryAfterSeconds: 1,
    compatType: 'rate_limit_exceeded',
  });
}
