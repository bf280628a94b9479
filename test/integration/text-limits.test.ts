/**
 * Limits on synthesis text, over HTTP on every synthesis route: what is
 * counted (SPEC characters, test-key words), what is refused before billing
 * (nothing to speak, a text that reads far longer than it bills), and that a
 * payer who cannot pay is refused before any preparation work.
 */
import test from 'ava';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
test.before(async () => {
  p = await startTestPlatform();
});
test.after.always(async () => {
  await p?.stop();
});

type Route = { path: string; body: (text: string) => Record<string, unknown>; codeOf: (json: any) => string | null };

const ROUTES: Record<string, Route> = {
  '/tts': { path: '/tts', body: (text) => ({ text }), codeOf: (j) => j.code ?? null },
  '/tts/stream': { path: '/tts/stream', body: (text) => ({ text }), codeOf: (j) => j.code ?? null },
  '/audio/speech': { path: '/audio/speech', body: (input) => ({ input, response_format: 'wav' }), codeOf: (j) => j.error?.type ?? null },
  '/agent/speech': { path: '/agent/speech', body: (text) => ({ message: { type: 'voice-request', text, sampleRate: 16000 } }), codeOf: (j) => j.code ?? null },
};

async function post(route: Route, key: string, text: string, extra: Record<string, unknown> = {}) {
  const res = await p.api(route.path, { method: 'POST', key, json: { ...route.body(text), ...extra } });
  const json = res.headers.get('content-type')?.includes('json') ? await res.json() : null;
  if (!json) await res.body?.cancel();
  return { status: res.status, json };
}

const balance = async (key: string) => (await (await p.api('/balance', { key })).json()).totalRemainingTokens as number;

const NOTHING_TO_SPEAK: Array<[string, string]> = [
  ['whitespace', ' \t\n   \u00A0\u3000 '],
  ['zero-width characters', '\u200B\u200C\u200D\u2060'],
  ['a lone surrogate', '\uD800'],
  ['NUL characters', '\u0000\u0000'],
  ['punctuation only', '... !!! ??? — … ;'],
  ['unknown tags only', '[music] [applause] [pause]'],
  ['a byte-order mark', '\uFEFF'],
  ['cue tags only, which every engine renders as silence', '[cười] [thở dài] [hắng giọng]'],
];

for (const [what, text] of NOTHING_TO_SPEAK) {
  test(`SPEC billing rule 3 / POST /tts: text with nothing to speak (${what}) is 400 NOTHING_TO_SPEAK before billing`, async (t) => {
    const { apiKey } = await p.bootstrap({ grant: { totalTokens: 10_000 } });
    const { status, json } = await post(ROUTES['/tts'], apiKey, text);
    t.is(status, 400);
    t.is(json.code, 'NOTHING_TO_SPEAK');
    t.is(await balance(apiKey), 10_000);
  });
}

test('text with nothing to speak is refused on the synchronous routes too, in each route\'s envelope', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  for (const name of ['/tts/stream', '/audio/speech', '/agent/speech']) {
    for (const text of ['[music] \u200B ...', '[cười] ... [thở dài]']) {
      const { status, json } = await post(ROUTES[name], apiKey, text);
      t.is(status, 400, `${name} ${text}`);
      t.is(ROUTES[name].codeOf(json), name === '/audio/speech' ? 'invalid_request_error' : 'NOTHING_TO_SPEAK', `${name} ${text}`);
    }
  }
  t.is(await balance(apiKey), 10_000);
});

test('a key whose grant cannot pay is refused before text preparation: 403, not NOTHING_TO_SPEAK, on every route', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 0 } });
  for (const [name, route] of Object.entries(ROUTES)) {
    const { status, json } = await post(route, apiKey, '[music] ...');
    t.is(status, 403, name);
    t.not(route.codeOf(json), 'NOTHING_TO_SPEAK', name);
  }
  // and a 50,000-digit text costs it no more than that
  for (const [name, route] of Object.entries(ROUTES)) t.is((await post(route, apiKey, '9'.repeat(50_000))).status, 403, name);
});

const ASTRAL = '😀';
const DECOMPOSED = 'e\u0323\u0302 '; // "ệ " written as base letter + two combining marks: 2 characters after NFC, 4 UTF-16 units

test('SPEC Limits: 50,000 characters are counted after NFC in code points on every route (astral and decomposed text fit)', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 0 } });
  for (const [name, route] of Object.entries(ROUTES)) {
    // at the limit: past validation (the 0-token key is then refused by billing)
    t.is((await post(route, apiKey, ASTRAL.repeat(50_000))).status, 403, `${name} astral at the limit`);
    t.is((await post(route, apiKey, DECOMPOSED.repeat(25_000))).status, 403, `${name} decomposed at the limit`);
    // one over: refused by validation
    const over = await post(route, apiKey, ASTRAL.repeat(50_001));
    t.is(over.status, 400, `${name} astral over the limit`);
    t.regex(JSON.stringify(over.json), /at most 50000 characters/, name);
    t.is((await post(route, apiKey, DECOMPOSED.repeat(25_000) + 'a')).status, 400, `${name} decomposed over the limit`);
  }
});

test('a run of more than 30 combining marks is refused at validation (normalising it is quadratic)', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 10_000 } });
  for (const [name, route] of Object.entries(ROUTES)) {
    const { status, json } = await post(route, apiKey, 'a' + '\u0301\u0323'.repeat(20));
    t.is(status, 400, name);
    t.regex(JSON.stringify(json), /more than 30 combining marks/, name);
    t.not((await post(route, apiKey, 'Tie\u0302\u0301ng Vie\u0323\u0302t, xin chào.')).status, 400, `${name}: ordinary decomposed text passes`);
  }
});

const SEPARATORS: Array<[string, string]> = [
  ['commas', ','], ['dots', '.'], ['dashes', '-'], ['slashes', '/'], ['zero-width spaces', '\u200B'], ['no-break spaces', '\u00A0'],
  ['ideographic spaces', '\u3000'], ['tabs', '\t'], ['colons', ':'], ['underscores', '_'], ['word joiners', '\u2060'],
];

for (const [what, separator] of SEPARATORS) {
  test(`SPEC API key: a test key's 100-word cap counts words joined by ${what}`, async (t) => {
    const { apiKey } = await p.bootstrap({ kind: 'test', grant: { totalTokens: 100_000 } });
    const words = (n: number) => Array.from({ length: n }, (_, i) => `chữ${String.fromCharCode(97 + (i % 26))}`).join(separator);
    for (const name of ['/tts', '/tts/stream', '/audio/speech']) {
      const { status, json } = await post(ROUTES[name], apiKey, words(101));
      t.is(status, 400, name);
      if (name !== '/audio/speech') t.is(json.code, 'TEST_KEY_WORD_LIMIT', name);
    }
    const { status } = await post(ROUTES['/tts'], apiKey, words(100));
    t.is(status, 201);
  });
}

test('a test key\'s cap also counts whitespace-separated tokens that are not words ("- - -")', async (t) => {
  const { apiKey } = await p.bootstrap({ kind: 'test', grant: { totalTokens: 100_000 } });
  const { status, json } = await post(ROUTES['/tts'], apiKey, `Xin chào ${'- '.repeat(100)}`);
  t.is(status, 400);
  t.is(json.code, 'TEST_KEY_WORD_LIMIT');
});

test('a text that would be read more than 10 times longer than it bills is 400 TEXT_EXPANSION_LIMIT before billing', async (t) => {
  const { apiKey } = await p.bootstrap({ grant: { totalTokens: 100_000 } });
  const formula = '1≤'.repeat(500) + '1';
  for (const name of ['/tts', '/tts/stream']) {
    const { status, json } = await post(ROUTES[name], apiKey, formula, { aiRefine: true });
    t.is(status, 400, name);
    t.is(json.code, 'TEXT_EXPANSION_LIMIT', name);
  }
  const compat = await post(ROUTES['/audio/speech'], apiKey, formula, { aiRefine: true });
  t.is(compat.status, 400);
  t.is(compat.json.error.type, 'invalid_request_error');
  t.is(await balance(apiKey), 100_000);
});
