/**
 * Piper's phoneme-to-id convention: BOS `^`, then every phoneme followed by
 * the pad `_`, then EOS `$`. Phonemes are Unicode code points after NFD, as
 * the map's keys are (combining marks such as the dental U+032A are separate).
 */

export const BOS = '^';
export const EOS = '$';
export const PAD = '_';

export interface PhonemeIds {
  ids: number[];
  /** phonemes the voice has no id for; skipped, as Piper does */
  missing: string[];
}

export function phonemesToIds(phonemes: string, idMap: Record<string, number[]>): PhonemeIds {
  const pad = idMap[PAD] ?? [];
  const ids: number[] = [...(idMap[BOS] ?? []), ...pad];
  const missing = new Set<string>();
  for (const p of Array.from(phonemes.normalize('NFD'))) {
    const mapped = idMap[p];
    if (!mapped) {
      missing.add(p);
      continue;
    }
    ids.push(...mapped, ...pad);
  }
  ids.push(...(idMap[EOS] ?? []));
  return { ids, missing: [...missing] };
}

/**
 * espeak prints one line per clause and drops the punctuation; Piper voices
 * are trained with it, so clause ends become commas and the chunk keeps its
 * final mark.
 */
export function joinClauses(clauses: string[], sourceText: string): string {
  const final = /[.!?]\s*$/u.exec(sourceText)?.[0].trim() ?? '';
  return clauses.join(', ') + final;
}
