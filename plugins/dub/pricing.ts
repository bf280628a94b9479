import { ceilTokens } from '../../core/billing/pricing.ts';

/**
 * SPEC Billing rule 4: `POST /dub` is billed by output audio duration, 65
 * tokens per second, floor 150, multiplied by the engine multiplier (the
 * global multiplier does not apply), rounded up to a whole token after
 * removing float noise.
 */
export const DUB_TOKENS_PER_SECOND = 65;
export const DUB_MIN_TOKENS = 150;

export function dubPriceTokens(seconds: number, engineMultiplier: number): number {
  return ceilTokens(Math.max(DUB_MIN_TOKENS, DUB_TOKENS_PER_SECOND * seconds) * engineMultiplier);
}
