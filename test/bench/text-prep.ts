/**
 * Text preparation is linear: `npx tsx test/bench/text-prep.ts [--quick]`.
 *
 * Times prepareText (and the aiRefine path: refineText then prepareText) on
 * pathological inputs at 3,125, 12,500 and 50,000 characters and prints the
 * time per character at each size. Then fuzzes: random short patterns from
 * an alphabet of every character a preparation rule reacts to, repeated to
 * 3,125 and 50,000 characters (fixed seed, so a failure replays).
 *
 * Target: for every input, time per character at the largest size is less
 * than 4 times that at the smallest. The sizes differ 16-fold, so a
 * quadratic rule shows a ratio near 16, n·log n about 1.3, linear about 1;
 * 4 leaves room for noise (GC, caches) while no quadratic rule can pass.
 * Time is the process's CPU time, not wall time, so other processes on a
 * shared machine do not count; a suspect ratio is measured again before it
 * counts. Exits 1 on a miss.
 */
import { prepareText, TextExpansionError } from '../../core/speechkit/text/prepare.ts';
import { refineText } from '../../core/speechkit/text/refiner.ts';
import { ModerationList } from '../../core/speechkit/text/moderation.ts';

const QUICK = process.argv.includes('--quick');
const SIZES = [3_125, 12_500, 50_000];
const RATIO_LIMIT = 4;
const FUZZ_PATTERNS = QUICK ? 40 : 160;
/** Each measurement repeats the work until it has run this long, and keeps the fastest round. */
const MIN_SAMPLE_MS = 30;

const moderation = new ModerationList(['ma túy', 'cờ bạc online', 'bom']);

type Build = (n: number) => string;
const repeat = (unit: string): Build => (n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
const wrap = (head: string, unit: string, tail: string): Build => (n) => head + repeat(unit)(n - head.length - tail.length) + tail;

/** Inputs that defeated earlier versions, and their neighbours. */
const PATHOLOGICAL: Record<string, Build> = {
  'digits': repeat('9'),
  'zeros': repeat('0'),
  'digits then %': wrap('', '9', '%'),
  'digits then đ': wrap('', '7', 'đ'),
  'digits then km': wrap('', '5', 'km'),
  'dotted groups': repeat('123.'),
  'comma groups': repeat('123,'),
  'digit dot': repeat('1.'),
  'digit comma': repeat('1,'),
  'digit space': repeat('1 '),
  'digit dash': repeat('1-'),
  'digit slash': repeat('1/'),
  'digit colon': repeat('1:'),
  'mixed figures': repeat('12.345,6 '),
  'phone-like': repeat('0912 345 678 '),
  'plus 84': repeat('+84'),
  'spaces': wrap('a', ' ', 'b'),
  'tabs and nbsp': wrap('a', '\t\u00A0', 'b'),
  'spaces then &': wrap('a', ' ', '&'),
  'newlines': wrap('a', '\n', 'b'),
  'space newline': repeat(' \n'),
  'dots': repeat('.'),
  'dots then a letter': wrap('', '.', 'x'),
  'ellipses': wrap('', '…', 'x'),
  'commas': repeat(','),
  'long word': repeat('a'),
  'long capital word': repeat('A'),
  'initials': repeat('A. '),
  'titles': repeat('Mr. '),
  'open brackets': repeat('['),
  'bracket pairs': repeat('[a]'),
  'unclosed bracket': wrap('[', 'a', ''),
  'long bracket': wrap('[', 'a', ']'),
  'cue tags': repeat('[cười]'),
  'combining marks': wrap('a', '\u0301\u0323', ''),
  'combining runs of 30': repeat('a' + '\u0301'.repeat(30)),
  'zero-width': repeat('\u200B'),
  'astral': repeat('😀'),
  'lone surrogates': repeat('\uD800'),
  'NUL': repeat('\0'),
  'ampersands': repeat('&'),
  'percents': repeat('9%'),
  'dollars': repeat('$9'),
  'roman after chương': wrap('chương ', 'M', ''),
  'dates': repeat('1/1/2020 '),
  'times': repeat('1:1:'),
  'formula': repeat('a+'),
  'open parens': repeat('(('),
  'parens with operands': repeat('(a)+'),
  'comparisons': repeat('a≤'),
  'roots': repeat('√ '),
  'superscripts': repeat('a²'),
  'negatives': repeat(' -1'),
  'acronyms': repeat('ABC '),
  'English hints': repeat('email '),
  'moderation near-miss': repeat('ma '),
  'Vietnamese prose': repeat('Sáng nay, ngày 15/3, giá 50.000đ tăng 3,5% tại TP.HCM. '),
};

/** Every character some rule looks at, plus plain letters and spaces. */
const ALPHABET = [
  ...'0123456789', ...'.,:;/-–−+%&$€£¥đĐkKhpm\'"()[]²³√^=<>≤≥≠×÷*_`~#|!?…', ' ', ' ', '\n', '\t', '\u00A0', '\u200B',
  ...'aAeEiIMVXCLDTPQWxyzươếệ', '\u0301', '\u0323', 'ngày ', 'tháng ', 'thứ ', 'chương ', 'TP.', 'UBND', 'km', 'VND', '[cười]', '[x]',
];

/** Mulberry32: a small seeded generator, so a failing pattern can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fuzzPatterns(count: number): Record<string, Build> {
  const next = random(20261010);
  const out: Record<string, Build> = {};
  for (let i = 0; i < count; i++) {
    const length = 1 + Math.floor(next() * 5);
    let unit = '';
    for (let j = 0; j < length; j++) unit += ALPHABET[Math.floor(next() * ALPHABET.length)];
    out[`fuzz ${JSON.stringify(unit)}`] = repeat(unit);
  }
  return out;
}

function prepare(text: string): void {
  try {
    prepareText(text, { sourceCharacters: text.length });
  } catch (err) {
    if (!(err instanceof TextExpansionError)) throw err;
  }
}

function refineThenPrepare(text: string): void {
  try {
    prepare(refineText(text, moderation).text);
  } catch (err) {
    if ((err as Error).name !== 'ModerationRefusal') throw err;
  }
}

/** CPU time of this process in ms: unlike wall time, it does not count the time other processes had the cores. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Nanoseconds of CPU per character: the fastest of as many rounds as fit in MIN_SAMPLE_MS of CPU (at least 3). */
function nsPerChar(work: (text: string) => void, text: string): number {
  let best = Infinity;
  const started = cpuMs();
  for (let round = 0; round < 3 || cpuMs() - started < MIN_SAMPLE_MS; round++) {
    const t = cpuMs();
    work(text);
    best = Math.min(best, cpuMs() - t);
    if (round > 50) break;
  }
  return (Math.max(best, 0.001) * 1e6) / text.length;
}

interface Row {
  name: string;
  perChar: number[];
  ratio: number;
}

function measure(name: string, build: Build, work: (text: string) => void, sizes: number[]): Row {
  const perChar = sizes.map((n) => nsPerChar(work, build(n)));
  return { name, perChar, ratio: perChar[perChar.length - 1] / perChar[0] };
}

/** Measures again before calling a ratio a miss: one GC pause must not fail the run. */
function confirmed(name: string, build: Build, work: (text: string) => void, sizes: number[]): Row {
  let row = measure(name, build, work, sizes);
  for (let retry = 0; retry < 2 && row.ratio >= RATIO_LIMIT; retry++) row = measure(name, build, work, sizes);
  return row;
}

function table(title: string, rows: Row[], sizes: number[]): void {
  console.log(`\n${title}: ns per character at ${sizes.map((n) => n.toLocaleString('en')).join(' / ')} characters, largest/smallest ratio`);
  for (const r of rows) {
    const flag = r.ratio >= RATIO_LIMIT ? '  <-- MISS' : '';
    console.log(`  ${r.name.padEnd(34)} ${r.perChar.map((v) => v.toFixed(0).padStart(7)).join(' ')}   x${r.ratio.toFixed(2)}${flag}`);
  }
}

const misses: string[] = [];
const summary: Array<{ title: string; rows: Row[] }> = [];
for (const [title, work] of [['prepareText', prepare], ['aiRefine then prepareText', refineThenPrepare]] as const) {
  const rows = Object.entries(PATHOLOGICAL).map(([name, build]) => confirmed(name, build, work, SIZES));
  table(title, rows, SIZES);
  summary.push({ title, rows });
}
const fuzzSizes = [SIZES[0], SIZES[SIZES.length - 1]];
const fuzzRows = Object.entries(fuzzPatterns(FUZZ_PATTERNS)).map(([name, build]) => confirmed(name, build, refineThenPrepare, fuzzSizes));
const worstFuzz = [...fuzzRows].sort((a, b) => b.ratio - a.ratio).slice(0, 10);
table(`fuzz (${FUZZ_PATTERNS} random patterns, aiRefine then prepareText), the 10 highest ratios`, worstFuzz, fuzzSizes);
summary.push({ title: 'fuzz', rows: fuzzRows });

for (const { title, rows } of summary) for (const r of rows) if (r.ratio >= RATIO_LIMIT) misses.push(`${title}: ${r.name} x${r.ratio.toFixed(2)}`);
const all = summary.flatMap((s) => s.rows);
const slowest = all.reduce((a, b) => (b.perChar[b.perChar.length - 1] > a.perChar[a.perChar.length - 1] ? b : a));
console.log(`\nhighest ratio x${Math.max(...all.map((r) => r.ratio)).toFixed(2)} (target < ${RATIO_LIMIT}); slowest at 50,000 characters: ${slowest.name}, ${(slowest.perChar[slowest.perChar.length - 1] * 50_000 / 1e6).toFixed(1)} ms`);
if (misses.length > 0) {
  console.log(`MISS: time per character grows with size for:\n  ${misses.join('\n  ')}`);
  process.exitCode = 1;
} else {
  console.log('text preparation is linear on every input tried');
}
