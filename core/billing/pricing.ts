/**
 * Token prices. Tokens = characters (NFC, at least 50) x engine multiplier x
 * global multiplier, rounded UP to a whole token after removing float noise
 * (50 x 3 x 1.3 is 195, not 196). The aiRefine surcharge is
 * ceil(characters x surcharge per character), added only when aiRefine is true.
 */
export const MIN_BILLED_CHARACTERS = 50;

/** Characters as SPEC counts them: Unicode code points after NFC normalisation. */
export function countCharacters(text: string): number {
  let n = 0;
  for (const _ of text.normalize('NFC')) n++;
  return n;
}

export function billedCharacters(characters: number): number {
  return Math.max(MIN_BILLED_CHARACTERS, characters);
}

/** Rounds a token amount up to a whole token, after removing float noise (50 × 3 × 1.3 is 195, not 196). */
export function ceilTokens(x: number): number {
  return Math.ceil(Math.round(x * 1e6) / 1e6);
}

export interface PriceInput {
  characters: number;
  engineMultiplier: number;
  globalMultiplier: number;
  aiRefine: boolean;
  aiRefineSurchargePerChar: number;
}

export function priceTokens(input: PriceInput): number {
  const chars = billedCharacters(input.characters);
  const base = ceilTokens(chars * input.engineMultiplier * input.globalMultiplier);
  const surcharge = input.aiRefine ? ceilTokens(chars * input.aiRefineSurchargePerChar) : 0;
  return base + surcharge;
}
