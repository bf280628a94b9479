import type { Analytics } from '../../core/ports/analytics.ts';
import type { AuthContext } from '../../core/http/auth.ts';
import { DomainError } from '../../core/errors.ts';
import { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS } from './schemas.ts';

const DAY_MS = 86_400_000;

export function usageWindow(from: Date | undefined, to: Date | undefined, now = new Date()): { from: Date; to: Date } {
  const end = to ?? now;
  const start = from ?? new Date(end.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (start.getTime() > end.getTime()) throw new DomainError('invalid', ['from must be before to'], { param: 'from', code: 'VALIDATION_FAILED' });
  if (end.getTime() - start.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
    throw new DomainError('invalid', [`the window from "from" to "to" may span at most ${MAX_WINDOW_DAYS} days`], { param: 'from', code: 'VALIDATION_FAILED' });
  }
  return { from: start, to: end };
}

/** `GET /usage`: the key's or the account's usage over a window (SPEC: Usage). */
export async function usageReport(analytics: Analytics, auth: AuthContext, query: { from?: Date; to?: Date; scope: 'key' | 'account' }) {
  const { from, to } = usageWindow(query.from, query.to);
  const report = await analytics.usage({ scope: query.scope, accountId: auth.accountId, keyId: query.scope === 'key' ? auth.keyId : null, from, to });
  return {
    scope: query.scope,
    apiKeyId: query.scope === 'key' ? auth.keyId : null,
    userId: auth.accountId,
    from: from.toISOString(),
    to: to.toISOString(),
    ...report,
  };
}
