/**
 * Strings built from `pieces`, the same ones on every run: the n-th has
 * 1 + (n % maxPieces) pieces, chosen by a linear congruential generator
 * seeded with `seed`. For tests that hold a faster rewrite equal to the
 * code it replaced over many inputs.
 */
export function* generatedStrings(pieces: readonly string[], count: number, maxPieces: number, seed: number): Generator<string> {
  let x = seed >>> 0;
  for (let n = 0; n < count; n++) {
    let out = '';
    for (let i = 0, len = 1 + (n % maxPieces); i < len; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      out += pieces[(x >>> 8) % pieces.length];
    }
    yield out;
  }
}
