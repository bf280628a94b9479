/**
 * Letter names and respellings used by aiRefine. espeak's Vietnamese voice
 * reads an unknown capitalised token as a word ("GDP" → one syllable) and
 * switches to an English voice for English words; spelling them the way
 * Vietnamese speakers say them keeps one voice and the expected reading.
 */
import { ABBREVIATIONS, CURRENCY_AFTER, SCALE_SUFFIXES, UNITS, alternation } from './lexicon.ts';
import { parseRoman } from './numbers.ts';

/** Letter names as said in Vietnamese when spelling acronyms ("VTV" → "vê tê vê"). */
export const LETTER_NAMES: Record<string, string> = {
  A: 'a', B: 'bê', C: 'xê', D: 'đê', Đ: 'đê', E: 'e', F: 'ép', G: 'gờ', H: 'hát', I: 'i',
  J: 'gi', K: 'ca', L: 'lờ', M: 'mờ', N: 'nờ', O: 'o', P: 'pê', Q: 'quy', R: 'rờ', S: 'ét',
  T: 'tê', U: 'u', V: 'vê', W: 'vê kép', X: 'ích', Y: 'i', Z: 'dét',
};

/** Acronyms that Vietnamese speakers say with English letter names. */
export const ENGLISH_ACRONYMS: Record<string, string> = {
  AI: 'ây ai',
  CEO: 'xi i âu',
  IT: 'ai ti',
  PR: 'pi a',
  KPI: 'kây pi ai',
  USB: 'iu ét bi',
  OK: 'ô kê',
  TV: 'ti vi',
  PC: 'pi xi',
  IQ: 'ai kiu',
  EQ: 'i kiu',
  MC: 'em xi',
  DJ: 'đi giây',
  CV: 'xi vi',
  VIP: 'vi ai pi',
  FAQ: 'ép ây kiu',
  API: 'ây pi ai',
  IoT: 'ai âu ti',
};

/** Common English words in Vietnamese speech, respelled as they are said. Keys are lower case. */
export const ENGLISH_HINTS: Record<string, string> = {
  email: 'i meo',
  online: 'on lai',
  offline: 'óp lai',
  facebook: 'phây búc',
  google: 'gu gồ',
  youtube: 'diu túp',
  tiktok: 'tích tốc',
  zalo: 'da lô',
  iphone: 'ai phôn',
  laptop: 'láp tốp',
  smartphone: 'xmát phôn',
  website: 'oép sai',
  internet: 'in tơ nét',
  wifi: 'oai phai',
  'wi-fi': 'oai phai',
  livestream: 'lai xờ trim',
  marketing: 'ma két tinh',
  game: 'gêm',
  video: 'vi đê ô',
  selfie: 'sen phi',
  shopping: 'sốp ping',
  app: 'áp',
  chatbot: 'chát bót',
  startup: 'xtát áp',
  covid: 'cô vít',
  ok: 'ô kê',
};

/** Spells an acronym letter by letter, preferring the customary English reading when there is one. */
export function spellAcronym(token: string): string {
  const custom = ENGLISH_ACRONYMS[token];
  if (custom) return custom;
  return Array.from(token, (ch) => LETTER_NAMES[ch.toUpperCase()] ?? ch).join(' ');
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'-]*/gu;
const ACRONYM = /^(?:[A-ZĐ]{2,6}|IoT)$/u;
/** A number, maybe with a scale word ("5 triệu"), right before a token: the token is a unit or currency that preparation reads. */
const AMOUNT_BEFORE = new RegExp(`\\d(?:\\s?(?:${alternation(Object.keys(SCALE_SUFFIXES))}))?\\s?$`, 'u');
/** "tháng 5 MB", "năm 2023 MB", "quý 3 VCB": a number naming a month, year or quarter is no amount (MB is a bank there). */
const NAMED_NUMBER_BEFORE = /(?:tháng|năm|quý|ngày|lớp|số|quận|phòng)\s\d+\s?$/iu;
const isReadAfterAmount = (word: string, text: string, index: number) =>
  (word in UNITS || word in CURRENCY_AFTER) && AMOUNT_BEFORE.test(text.slice(Math.max(0, index - 10), index))
  && !NAMED_NUMBER_BEFORE.test(text.slice(Math.max(0, index - 16), index));
const isShouted = (word: string | undefined) => !!word && /\p{Lu}{2,}/u.test(word) && word === word.toUpperCase();

/**
 * Spells acronyms and respells common English words. A run of capitalised
 * words is a shouted heading, not a row of acronyms, so it is left alone;
 * abbreviations that text preparation expands (UBND), Roman numerals
 * (XXI), and units and currencies after an amount ("5 USD", "512 GB") are
 * left for it.
 */
export function respellTokens(text: string): string {
  const words = Array.from(text.matchAll(WORD));
  let out = '';
  let last = 0;
  words.forEach((m, i) => {
    const word = m[0];
    let replacement: string | null = null;
    const hint = ENGLISH_HINTS[word.toLowerCase()];
    const shouting = isShouted(words[i - 1]?.[0]) || isShouted(words[i + 1]?.[0]);
    if (hint) replacement = hint;
    else if (
      ACRONYM.test(word) &&
      !shouting &&
      !(word in ABBREVIATIONS) &&
      !isReadAfterAmount(word, text, m.index!) &&
      !(/^[IVX]+$/.test(word) && parseRoman(word) !== null)
    ) {
      replacement = spellAcronym(word);
    }
    if (replacement !== null) {
      out += text.slice(last, m.index) + replacement;
      last = m.index! + word.length;
    }
  });
  return out + text.slice(last);
}
