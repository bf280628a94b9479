import type { WebhookSecret } from '../../ports/webhooks.ts';

/**
 * The secrets of an endpoint after a rotation (SPEC: "returns a new secret
 * once; the previous one verifies for 24 more hours"): the new secret, then
 * the one that was current until now with `previousExpiresAt`, if that is
 * still ahead of `now`. Older secrets are dropped at once, so an endpoint
 * signs with at most two secrets however often it is rotated. Pure: both
 * store adapters apply it inside their own atomic update.
 */
export function rotatedSecrets(current: readonly WebhookSecret[], next: WebhookSecret, previousExpiresAt: string, now: string): WebhookSecret[] {
  const previous = current.find((s) => s.expiresAt === null) ?? current[0];
  if (!previous || Date.parse(previousExpiresAt) <= Date.parse(now)) return [next];
  return [next, { ...previous, expiresAt: previousExpiresAt }];
}
