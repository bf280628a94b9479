import { DomainError } from '../../errors.ts';

/**
 * SPEC "Text validations": run on POST /tts, /dialogue and /srt only.
 * Both refusals are 400 with a message and no code.
 */
export const UNSUPPORTED_LANGUAGE = 'Text appears to be in an unsupported language';
export const UNREADABLE = 'Text does not look like readable words';

const LETTER = /\p{L}/u;
const LATIN = /\p{Script=Latin}/u;
const VOWEL = /[aeiouy]/;

/**
 * Code points settled without a regular expression: ASCII, and the blocks
 * Vietnamese letters come from, whose every code point is a Latin letter
 * (Latin-1 letters, Latin Extended-A and -B, Latin Extended Additional);
 * the unit tests check each of them against the Unicode properties.
 */
export function isLatinLetterFast(code: number): boolean | null {
  if (code < 0x80) return (code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a;
  if ((code >= 0xc0 && code <= 0x24f && code !== 0xd7 && code !== 0xf7) || (code >= 0x1e00 && code <= 0x1eff)) return true;
  return null;
}

/** Share of letters outside the Latin script (Vietnamese letters are Latin). */
export function nonLatinShare(text: string): number {
  let letters = 0;
  let foreign = 0;
  for (const ch of text) {
    const fast = isLatinLetterFast(ch.charCodeAt(0));
    if (fast !== null) {
      if (fast) letters++;
      continue;
    }
    if (!LETTER.test(ch)) continue;
    letters++;
    if (!LATIN.test(ch)) foreign++;
  }
  return letters === 0 ? 0 : foreign / letters;
}

/** Maximal runs of letters; punctuation, digits and spaces break a run. */
export function letterRuns(text: string): string[] {
  return text.normalize('NFC').match(/\p{L}+/gu) ?? [];
}

function hasVowelSlow(word: string): boolean {
  if (VOWEL.test(word.toLowerCase())) return true;
  // Strip diacritics so ắ, ơ, ư... count as the vowels they are built on.
  const base = word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
  return VOWEL.test(base);
}

/**
 * The letters of the fast blocks (isLatinLetterFast) that count as vowels,
 * each settled once by the rule itself: both steps of it work letter by
 * letter there, so a word of such letters has a vowel exactly when one of
 * its letters is one.
 */
const VOWEL_LETTERS: ReadonlySet<number> = (() => {
  const vowels = new Set<number>();
  for (let code = 0; code <= 0x1eff; code++) {
    if (isLatinLetterFast(code) && hasVowelSlow(String.fromCharCode(code))) vowels.add(code);
  }
  return vowels;
})();

export function hasVowel(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const code = word.charCodeAt(i);
    if (VOWEL_LETTERS.has(code)) return true;
    if (!isLatinLetterFast(code)) return hasVowelSlow(word);
  }
  return false;
}

export function unreadableReason(text: string): 'long_run' | 'no_vowels' | null {
  const runs = letterRuns(text);
  if (runs.some((r) => [...r].length > 30)) return 'long_run';
  const wordLike = runs.filter((r) => [...r].length >= 4);
  if (wordLike.length >= 3) {
    const vowelless = wordLike.filter((w) => !hasVowel(w)).length;
    if (vowelless / wordLike.length > 0.6) return 'no_vowels';
  }
  return null;
}

export function validateReadableText(text: string, param = 'text'): void {
  if (nonLatinShare(text) > 0.34) {
    throw new DomainError('invalid', `${UNSUPPORTED_LANGUAGE}: more than 34% of its letters are outside the Latin script. Send Vietnamese text (English words inside it are fine).`, { param });
  }
  const reason = unreadableReason(text);
  if (reason === 'long_run') {
    throw new DomainError('invalid', `${UNREADABLE}: it contains an unbroken run of more than 30 letters.`, { param });
  }
  if (reason === 'no_vowels') {
    throw new DomainError('invalid', `${UNREADABLE}: most of its words have no vowels.`, { param });
  }
}
