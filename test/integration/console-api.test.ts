import test from 'ava';
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { TestBrowser } from '../helpers/oauth-browser.ts';
import { createUser, type TestUser } from '../helpers/oauth-flow.ts';
import { waitFor } from '../helpers/wait.ts';
import { coreServices } from '../../core/services.ts';

/**
 * The console's session routes over HTTP (no browser): SPEC "Keys are
 * created by a signed-in user in the web application", with the same users,
 * lockout and CSRF protection as the OAuth sign-in; the session's short-lived
 * token as a credential on the public routes; the key rules (5 keys, active
 * grant, trial once); and how the built front end is served.
 */
let p: TestPlatform;
let assets: string;

test.before(async () => {
  // A stand-in for the built front end: these tests are about serving, the browser tests build the real one.
  assets = mkdtempSync(path.join(tmpdir(), 'console-assets-'));
  mkdirSync(path.join(assets, 'assets'));
  writeFileSync(path.join(assets, 'index.html'), '<!doctype html><title>VieNeu Console</title><script type="module" src="/console/assets/index-abc123.js"></script>');
  writeFileSync(path.join(assets, 'assets', 'index-abc123.js'), 'console.log("console");');
  p = await startTestPlatform({
    PLUGINS: 'catalog,account,speech,jobs,usage,webhooks,oauth,console', MODULES: 'inference,pipelines/usage-aggregator',
    CONSOLE_ASSETS_DIR: assets, SIGNIN_MAX_FAILURES: '3', SIGNIN_LOCKOUT_MINUTES: '10', SIGNIN_PER_MINUTE: '100',
  });
});
test.after.always(async () => {
  await p?.stop();
  rmSync(assets, { recursive: true, force: true });
});

/** A browser with the console open: its cookies, and the CSRF token of its session. */
class ConsoleVisitor {
  readonly browser = new TestBrowser();
  csrf = '';
  token = '';

  constructor(private readonly base: string) {}

  async session(): Promise<Record<string, any>> {
    const body = await (await this.browser.request(`${this.base}/console/api/session`)).json();
    this.csrf = body.csrf;
    this.token = body.api?.token ?? '';
    return body;
  }

  call(method: string, route: string, json?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return this.browser.request(`${this.base}/console/api${route}`, {
      method,
      headers: { 'x-csrf-token': this.csrf, origin: this.base, ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: json !== undefined ? JSON.stringify(json) : undefined,
    });
  }

  async signIn(user: { email: string; password: string }): Promise<Response> {
    await this.session();
    const res = await this.call('POST', '/sign-in', { email: user.email, password: user.password });
    if (res.status === 200) {
      const body = await res.clone().json();
      this.csrf = body.csrf;
      this.token = body.api.token;
    }
    return res;
  }
}

async function signedIn(user?: TestUser): Promise<{ v: ConsoleVisitor; user: TestUser }> {
  const u = user ?? (await createUser(p));
  const v = new ConsoleVisitor(p.url);
  const res = await v.signIn(u);
  if (res.status !== 200) throw new Error(`sign-in: ${res.status} ${await res.text()}`);
  return { v, user: u };
}

test('signing in takes the platform\'s users: the session answers who is signed in and a short-lived API token; signing out ends both', async (t) => {
  const user = await createUser(p);
  const v = new ConsoleVisitor(p.url);
  t.like(await v.session(), { signedIn: false });
  const res = await v.signIn(user);
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  const body = await res.json();
  t.like(body, { signedIn: true, user: { email: user.email, accountId: user.accountId } });
  t.regex(body.api.token, /^vnc_/);
  const minutes = (Date.parse(body.api.expiresAt) - Date.now()) / 60_000;
  t.true(minutes > 14 && minutes <= 15, `token lasts ${minutes} minutes`);
  t.truthy(v.browser.cookie('vn_session'));

  // The token acts for the user's account on the public routes.
  const balance = await p.api('/balance', { key: body.api.token });
  t.is(balance.status, 200);
  t.is((await balance.json()).plan.grantId, user.grantId);

  t.is((await v.call('POST', '/sign-out')).status, 204);
  t.like(await v.session(), { signedIn: false });
  const after = await p.api('/balance', { key: body.api.token });
  t.is(after.status, 401, 'the token of an ended session is refused at once');
  t.is((await after.json()).code, 'CONSOLE_SESSION_ENDED');
});

test('sign-in refuses a wrong password, locks the user after SIGNIN_MAX_FAILURES, and needs the CSRF token and this site\'s Origin', async (t) => {
  const user = await createUser(p);
  const v = new ConsoleVisitor(p.url);
  await v.session();
  const wrong = await v.call('POST', '/sign-in', { email: user.email, password: 'not the password at all' });
  t.is(wrong.status, 401);
  t.is((await wrong.json()).code, 'SIGN_IN_FAILED');

  const noCsrf = await v.call('POST', '/sign-in', { email: user.email, password: user.password }, { 'x-csrf-token': 'forged' });
  t.is(noCsrf.status, 403);
  t.is((await noCsrf.json()).code, 'CSRF_FAILED');
  const foreign = await v.call('POST', '/sign-in', { email: user.email, password: user.password }, { origin: 'https://evil.example' });
  t.is(foreign.status, 403);

  for (let i = 0; i < 2; i++) await v.call('POST', '/sign-in', { email: user.email, password: 'still not the password' });
  const locked = await v.call('POST', '/sign-in', { email: user.email, password: user.password });
  t.is(locked.status, 429);
  t.is((await locked.json()).code, 'SIGN_IN_LOCKED');
  t.truthy(locked.headers.get('retry-after'));
});

test('every session route needs a signed-in session (401 SIGN_IN_REQUIRED), and changes need the CSRF token', async (t) => {
  const anonymous = new ConsoleVisitor(p.url);
  await anonymous.session();
  for (const [method, route] of [['GET', '/keys'], ['POST', '/keys'], ['DELETE', '/keys/key_x'], ['POST', '/trial'], ['GET', '/grants']]) {
    const res = await anonymous.call(method, route, method === 'POST' ? {} : undefined);
    t.is(res.status, 401, `${method} ${route}`);
    t.is((await res.json()).code, 'SIGN_IN_REQUIRED');
  }
  const { v } = await signedIn();
  const res = await v.call('POST', '/keys', { kind: 'live' }, { 'x-csrf-token': 'stale' });
  t.is(res.status, 403);
  t.is((await res.json()).code, 'CSRF_FAILED');
});

test('the keys view names the plan a key stands on when that plan is spent (no longer among the active ones), with its state', async (t) => {
  const { v, user } = await signedIn();
  t.is((await v.call('POST', '/keys', { kind: 'live', name: 'Server' })).status, 201);
  t.is((await p.admin(`/grants/${user.grantId}`, { method: 'PATCH', json: { status: 'replaced' } })).status, 200);
  const view = await (await v.call('GET', '/keys')).json();
  t.deepEqual(view.activeGrants, []);
  t.like(view.keyGrants.find((g: { grantId: string }) => g.grantId === user.grantId), { status: 'replaced' });
  t.true(view.keys.every((k: { grantId: string }) => view.keyGrants.some((g: { grantId: string }) => g.grantId === k.grantId)));
});

test('a signed-in user creates a live and a test key (plaintext once), lists them, and revokes one: the revoked key is refused at once', async (t) => {
  const { v, user } = await signedIn();
  const created = await v.call('POST', '/keys', { kind: 'test', name: 'CI' });
  t.is(created.status, 201);
  const { apiKey, key } = await created.json();
  t.regex(apiKey, /^vn_test_[A-Za-z0-9]{32}$/);
  t.like(key, { kind: 'test', name: 'CI', grantId: user.grantId, revokedAt: null, lastUsedAt: null });
  t.is((await p.api('/balance', { key: apiKey })).status, 200);

  const listed = await (await v.call('GET', '/keys')).json();
  t.is(listed.maxActiveKeys, 5);
  t.is(listed.keys[0].id, key.id, 'newest first');
  t.false(JSON.stringify(listed).includes(apiKey), 'the plaintext is never listed');
  t.deepEqual(listed.activeGrants.map((g: { grantId: string }) => g.grantId), [user.grantId]);
  t.deepEqual(listed.keyGrants.map((g: { grantId: string; status: string }) => [g.grantId, g.status]), [[user.grantId, 'active']], 'the plans the keys stand on');

  t.is((await v.call('DELETE', `/keys/${key.id}`)).status, 200);
  t.is((await p.api('/balance', { key: apiKey })).status, 401);
  const again = await (await v.call('GET', '/keys')).json();
  t.truthy(again.keys.find((k: { id: string }) => k.id === key.id).revokedAt);
});

test('"last used" is recorded when a key is used (at most once a minute per key)', async (t) => {
  const { v } = await signedIn();
  const { apiKey, key } = await (await v.call('POST', '/keys', { kind: 'live' })).json();
  const before = Date.now();
  t.is((await p.api('/balance', { key: apiKey })).status, 200);
  const listed = await waitFor(async () => {
    const keys = (await (await v.call('GET', '/keys')).json()).keys as Array<{ id: string; lastUsedAt: string | null }>;
    return keys.find((k) => k.id === key.id)?.lastUsedAt ?? null;
  }, { what: 'lastUsedAt' });
  t.true(Date.parse(listed!) >= before - 1000 && Date.parse(listed!) <= Date.now());
});

test('at most 5 active keys (400 KEY_LIMIT_REACHED); another account\'s key is not found', async (t) => {
  const { v, user } = await signedIn();
  // createUser's account already holds one key.
  for (let i = 0; i < 4; i++) t.is((await v.call('POST', '/keys', { kind: 'live' })).status, 201);
  const sixth = await v.call('POST', '/keys', { kind: 'live' });
  t.is(sixth.status, 400);
  t.is((await sixth.json()).code, 'KEY_LIMIT_REACHED');

  const { v: other } = await signedIn();
  const foreign = await other.call('DELETE', `/keys/${(await (await v.call('GET', '/keys')).json()).keys[0].id}`);
  t.is(foreign.status, 404);
  t.is((await foreign.json()).code, 'KEY_NOT_FOUND');
  t.is((await p.api('/balance', { key: user.apiKey })).status, 200, 'nothing was revoked');
});

test('without an active grant no key can be made (403, "No active grant was found"); the trial starts once and then keys can be made', async (t) => {
  const account = await (await p.admin('/accounts', { method: 'POST', json: { name: 'No plan yet' } })).json();
  const email = `trial-${Date.now()}@example.com`;
  await p.admin(`/accounts/${account.id}/users`, { method: 'POST', json: { email, password: 'correct horse battery staple' } });
  const v = new ConsoleVisitor(p.url);
  t.is((await v.signIn({ email, password: 'correct horse battery staple' })).status, 200);

  const view = await (await v.call('GET', '/keys')).json();
  t.like(view, { keys: [], activeGrants: [], trialAvailable: true });
  const refused = await v.call('POST', '/keys', { kind: 'live' });
  t.is(refused.status, 403);
  const body = await refused.json();
  t.is(body.code, 'NO_ACTIVE_GRANT');
  t.regex(body.message, /No active grant was found/);
  // The session token still reads: a zero balance, not an error.
  t.like(await (await p.api('/balance', { key: v.token })).json(), { remaining: 0, plan: null });

  const trial = await v.call('POST', '/trial');
  t.is(trial.status, 201);
  t.like(await trial.json(), { name: 'trial', totalTokens: 20_000, remainingTokens: 20_000, daily: { limit: 10_000, remaining: 10_000 }, weekly: null, isGift: false, status: 'active' });
  const twice = await v.call('POST', '/trial');
  t.is(twice.status, 409);
  t.is((await twice.json()).code, 'TRIAL_ALREADY_USED');
  t.is((await v.call('POST', '/keys', { kind: 'live' })).status, 201);
  t.false((await (await v.call('GET', '/keys')).json()).trialAvailable);
});

test('every grant of the account is listed with its remaining tokens, caps and the instants they reset', async (t) => {
  const { v, user } = await signedIn(await createUser(p, undefined, { dailyCap: 5000, weeklyCap: 20_000, expiresInDays: 30 }));
  await p.admin(`/accounts/${user.accountId}/grants`, { method: 'POST', json: { totalTokens: 700, isGift: true } });
  const { grants } = await (await v.call('GET', '/grants')).json();
  t.is(grants.length, 2);
  const [plan, gift] = grants;
  t.like(plan, { grantId: user.grantId, totalTokens: 1_000_000, remainingTokens: 1_000_000, daily: { limit: 5000, used: 0, remaining: 5000 }, weekly: { limit: 20_000 }, isGift: false, status: 'active', expired: false });
  t.true(Date.parse(plan.daily.resetAt) > Date.now() && Date.parse(plan.daily.resetAt) <= Date.now() + 86_400_000);
  t.true(Date.parse(plan.expiresAt) > Date.now());
  t.like(gift, { totalTokens: 700, daily: null, weekly: null, expiresAt: null, isGift: true });
});

test('the session token is a credential of the account on the public routes: usage at account scope sees the console\'s own requests', async (t) => {
  const { v, user } = await signedIn();
  const spoken = await p.api('/audio/speech', { method: 'POST', key: v.token, json: { input: 'Xin chào từ bảng điều khiển.', response_format: 'wav' } });
  t.is(spoken.status, 200);
  await spoken.arrayBuffer();
  const usage = await waitFor(async () => {
    const u = await (await p.api('/usage?scope=account', { key: user.apiKey })).json();
    return u.totals.requests > 0 ? u : null;
  }, { timeoutMs: 20_000, what: 'the usage row' });
  t.like(usage.byRoute[0], { route: 'audio_speech', ok: 1 });
  const forged = `${v.token.slice(0, -4)}AAAA`;
  t.is((await p.api('/balance', { key: forged })).status, 401, 'a token with a wrong signature is refused');
});

test('the front end: every /console address is the page with a strict CSP; hashed assets are cached for a year; unknown assets are 404', async (t) => {
  for (const pathname of ['/console', '/console/', '/console/usage', '/console/audiobooks/book_1']) {
    const res = await fetch(`${p.url}${pathname}`);
    t.is(res.status, 200, pathname);
    t.regex(res.headers.get('content-type') ?? '', /text\/html/);
    t.is(res.headers.get('cache-control'), 'no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"]) t.true(csp.includes(directive), `${pathname}: ${directive}`);
    t.false(/unsafe-inline|unsafe-eval/.test(csp));
    t.is(res.headers.get('x-frame-options'), 'DENY');
    t.regex(await res.text(), /VieNeu Console/);
  }
  const asset = await fetch(`${p.url}/console/assets/index-abc123.js`);
  t.is(asset.status, 200);
  t.is(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.regex(asset.headers.get('content-type') ?? '', /javascript/);
  const etag = asset.headers.get('etag')!;
  t.is((await fetch(`${p.url}/console/assets/index-abc123.js`, { headers: { 'if-none-match': etag } })).status, 304);
  t.is((await fetch(`${p.url}/console/assets/missing.js`)).status, 404);
  t.is((await fetch(`${p.url}/console/assets/../../package.json`)).status, 404);
  t.is((await fetch(`${p.url}/console/api/nothing`)).status, 404);
});

test('without a built front end /console answers 503 saying how to build it, and the API still works', async (t) => {
  const empty = mkdtempSync(path.join(tmpdir(), 'console-unbuilt-'));
  const q = await startTestPlatform({ PLUGINS: 'catalog,account,console', MODULES: '', CONSOLE_ASSETS_DIR: empty });
  t.teardown(async () => {
    await q.stop();
    rmSync(empty, { recursive: true, force: true });
  });
  const res = await fetch(`${q.url}/console/`);
  t.is(res.status, 503);
  t.regex(await res.text(), /npm run build/);
  t.is((await fetch(`${q.url}/console/api/session`)).status, 200);
});

test('SPEC Limits: a console session is its person for the 2 open streams per signed-in user, shared with the person\'s OAuth apps: the third is 429 STREAM_CONCURRENCY', async (t) => {
  const { v, user } = await signedIn();
  // Streams whose body never finishes: each holds its place until closed.
  const holdOpen = () => {
    const req = http.request(`${p.url}/api/v1/tts/stream`, { method: 'POST', headers: { authorization: `Bearer ${v.token}`, 'content-type': 'application/json', 'content-length': '4096' } });
    req.on('error', () => undefined);
    req.write('{"text": "Xin chào');
    return req;
  };
  const slots = (await p.platform.service(coreServices.counters)).slots;
  const open = [holdOpen(), holdOpen()];
  try {
    await waitFor(async () => (await slots.inUse(`streams:user:${user.userId}`)) === 2, { what: 'both console streams to hold a place' });
    const third = await p.api('/tts/stream', { method: 'POST', key: v.token, json: { text: 'Xin chào các bạn' } });
    t.is(third.status, 429);
    t.is((await third.json()).code, 'STREAM_CONCURRENCY');
  } finally {
    open.forEach((req) => req.destroy());
  }
});
