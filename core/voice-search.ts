/**
 * Voice search with SPEC's `list_voices` rules (MCP server): what a person
 * types ("giọng nữ miền Nam", "warm male voice", "Huong") against the
 * catalogue. Shared by the MCP tool and the console's playground (which
 * bundles it for the browser, so it stays free of Node APIs).
 *
 * - gender and region terms are answered from the voice's `gender` and
 *   `region` fields, never from its description text;
 * - any other word matches a whole word of the id, name or description,
 *   ignoring case;
 * - a word typed with diacritics must match them exactly ("trầm" is not
 *   "trâm");
 * - a word typed without diacritics matches only the same plain word, and
 *   from 4 letters also any word it begins once diacritics are removed
 *   ("huong" finds "Hương", "tram" finds "trầm"; "nu" does not find "nữ");
 * - filler words ("giọng", "voice", "một", "please", ...) are ignored;
 * - a voice whose name is exactly the query comes first;
 * - when no voice has every word, the closest come back (most words first),
 *   each with the words it lacks.
 */

export interface SearchableVoice {
  id: string;
  name?: string | null;
  description?: string | null;
  gender?: string | null;
  region?: string | null;
}

type Term =
  | { kind: 'gender'; value: 'female' | 'male'; text: string }
  | { kind: 'region'; value: 'north' | 'central' | 'south'; text: string }
  | { kind: 'word'; text: string };

export interface VoiceMatch<V> {
  voice: V;
  /** terms of the query this voice does not have (empty for a full match) */
  missingWords: string[];
  exactName: boolean;
}

export interface VoiceSearch<V> {
  /** the meaningful terms of the query, in order */
  terms: string[];
  /** true when every returned voice has every term (or there was no query) */
  complete: boolean;
  matches: VoiceMatch<V>[];
  /** how many voices matched before `limit` */
  total: number;
}

const FILLER = new Set([
  // Vietnamese (with and without diacritics)
  'giọng', 'giong', 'một', 'mot', 'cái', 'cai', 'cho', 'tôi', 'toi', 'với', 'voi', 'và', 'va', 'có', 'co', 'là', 'la', 'người', 'nguoi',
  'đọc', 'doc', 'nói', 'noi', 'hãy', 'tìm', 'tim', 'muốn', 'muon', 'cần', 'của', 'cua', 'rất', 'rat', 'hơi', 'hoi', 'kiểu', 'kieu',
  'loại', 'loai', 'nhé', 'tiếng', 'tieng', 'việt', 'viet',
  // English
  'a', 'an', 'the', 'voice', 'voices', 'with', 'for', 'of', 'and', 'or', 'please', 'find', 'me', 'i', 'want', 'need', 'some', 'one',
  'that', 'is', 'in', 'like', 'sounding', 'sounds', 'sound', 'speaker', 'accent', 'accented', 'vietnamese',
]);

const GENDER_WORDS: Record<string, 'female' | 'male'> = {
  'nữ': 'female', female: 'female', woman: 'female', women: 'female', girl: 'female', feminine: 'female', 'gái': 'female',
  nam: 'male', male: 'male', man: 'male', men: 'male', boy: 'male', masculine: 'male', trai: 'male',
};

const REGION_WORDS: Record<string, 'north' | 'central' | 'south'> = {
  'bắc': 'north', north: 'north', northern: 'north', hanoi: 'north',
  trung: 'central', central: 'central', 'huế': 'central', hue: 'central',
  south: 'south', southern: 'south', saigon: 'south',
};

/** "miền Nam", "mien bac", "phía Bắc": the second word names a region, whatever it means alone. */
const REGION_LEADS = new Set(['miền', 'mien', 'phía', 'phia', 'vùng', 'vung']);
const REGION_AFTER_LEAD: Record<string, 'north' | 'central' | 'south'> = { 'bắc': 'north', bac: 'north', trung: 'central', nam: 'south' };
const REGION_PAIRS: Record<string, 'north' | 'central' | 'south'> = { 'hà nội': 'north', 'ha noi': 'north', 'sài gòn': 'south', 'sai gon': 'south' };

export function stripDiacritics(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').replace(/đ/g, 'd').replace(/Đ/g, 'D');
}

function words(text: string | null | undefined): string[] {
  return (text ?? '').normalize('NFC').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

/** The query as terms: region phrases first, then field terms, then plain words; filler dropped. */
export function parseQuery(query: string | null | undefined): Term[] {
  const tokens = words(query);
  const terms: Term[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    const next = tokens[i + 1];
    if (next !== undefined && REGION_LEADS.has(token) && REGION_AFTER_LEAD[next]) {
      terms.push({ kind: 'region', value: REGION_AFTER_LEAD[next], text: `${token} ${next}` });
      i++;
      continue;
    }
    if (next !== undefined && REGION_PAIRS[`${token} ${next}`]) {
      terms.push({ kind: 'region', value: REGION_PAIRS[`${token} ${next}`], text: `${token} ${next}` });
      i++;
      continue;
    }
    if (FILLER.has(token)) continue;
    if (GENDER_WORDS[token]) terms.push({ kind: 'gender', value: GENDER_WORDS[token], text: token });
    else if (REGION_WORDS[token]) terms.push({ kind: 'region', value: REGION_WORDS[token], text: token });
    else terms.push({ kind: 'word', text: token });
  }
  return terms;
}

function wordMatches(term: string, voiceWords: string[]): boolean {
  const plain = stripDiacritics(term);
  if (plain !== term) return voiceWords.includes(term); // typed with diacritics: exactly these
  return voiceWords.some((w) => w === term || (term.length >= 4 && stripDiacritics(w).startsWith(term)));
}

function termMatches(term: Term, voice: SearchableVoice, voiceWords: string[]): boolean {
  switch (term.kind) {
    case 'gender':
      return voice.gender === term.value;
    case 'region':
      return voice.region === term.value;
    default:
      return wordMatches(term.text, voiceWords);
  }
}

function isExactName(query: string, voice: SearchableVoice): boolean {
  const q = query.normalize('NFC').trim().toLowerCase();
  const name = (voice.name ?? '').normalize('NFC').toLowerCase();
  if (!q || !name) return false;
  return q === name || (stripDiacritics(q) === q && stripDiacritics(name) === q);
}

export function searchVoices<V extends SearchableVoice>(voices: V[], query: string | null | undefined, limit: number): VoiceSearch<V> {
  const terms = parseQuery(query);
  // "giọng Mai" names Mai as much as "Mai" does.
  const exact = (v: SearchableVoice) => isExactName(query ?? '', v) || (terms.length > 0 && isExactName(terms.map((t) => t.text).join(' '), v));
  const scored = voices.map((voice, order) => {
    const voiceWords = [...words(voice.id), ...words(voice.name), ...words(voice.description)];
    const missingWords = terms.filter((t) => !termMatches(t, voice, voiceWords)).map((t) => t.text);
    return { voice, missingWords, exactName: exact(voice), order };
  });
  const full = scored.filter((s) => s.missingWords.length === 0);
  const pool = full.length > 0 || terms.length === 0 ? full : scored.filter((s) => s.missingWords.length < terms.length);
  pool.sort((a, b) => Number(b.exactName) - Number(a.exactName) || a.missingWords.length - b.missingWords.length || a.order - b.order);
  return {
    terms: terms.map((t) => t.text),
    complete: full.length > 0 || terms.length === 0,
    matches: pool.slice(0, limit).map(({ voice, missingWords, exactName }) => ({ voice, missingWords, exactName })),
    total: pool.length,
  };
}
