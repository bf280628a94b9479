import test from 'ava';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { TestBrowser, formOf } from '../helpers/oauth-browser.ts';
import { createUser } from '../helpers/oauth-flow.ts';
import { coreServices } from '../../core/services.ts';

/**
 * Sign-in (SPEC Authentication 3 and 7, issue: sign-in): users created by
 * the admin API with a memory-hard hash, sign-in pages with CSRF protection
 * and strict security headers, rate limits and lockout after repeated
 * failures, the connected-apps page behind the session.
 */

let p: TestPlatform;

test.before(async () => {
  p = await startTestPlatform({ PLUGINS: 'catalog,account,speech,jobs,oauth,mcp', SIGNIN_MAX_FAILURES: '3', SIGNIN_LOCKOUT_MINUTES: '10', SIGNIN_PER_MINUTE: '50' });
});
test.after.always(async () => {
  await p?.stop();
});

async function signInPage(browser: TestBrowser) {
  const page = await browser.follow(`${p.url}/oauth/connected-apps`);
  return { url: page.url, res: page.res, html: await page.res.text() };
}

test('pages carry a strict CSP and the other security headers', async (t) => {
  const { url, res } = await signInPage(new TestBrowser());
  t.true(url.startsWith(`${p.url}/oauth/sign-in`), 'the connected-apps page needs a session');
  const csp = res.headers.get('content-security-policy') ?? '';
  for (const rule of ["default-src 'none'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'", "script-src 'nonce-"]) t.true(csp.includes(rule), rule);
  t.false(csp.includes('unsafe-inline'));
  t.is(res.headers.get('x-frame-options'), 'DENY');
  t.is(res.headers.get('referrer-policy'), 'no-referrer');
  t.is(res.headers.get('x-content-type-options'), 'nosniff');
  t.is(res.headers.get('cache-control'), 'no-store');
});

test('sign-in forms need their CSRF token and the site\'s own origin', async (t) => {
  const user = await createUser(p);
  const browser = new TestBrowser();
  const page = await signInPage(browser);
  const form = formOf(page.html);
  const post = (fields: Record<string, string>, origin = p.url) => browser.request(new URL(form.action, page.url).href, {
    method: 'POST', body: new URLSearchParams(fields), headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
  });
  t.is((await post({ email: user.email, password: user.password })).status, 403, 'no token');
  t.is((await post({ email: user.email, password: user.password, csrf: 'forged' })).status, 403, 'a wrong token');
  t.is((await post({ email: user.email, password: user.password, csrf: form.fields.csrf }, 'https://evil.example')).status, 403, 'another origin');
  const foreign = new TestBrowser();
  const res = await foreign.request(new URL(form.action, page.url).href, {
    method: 'POST', body: new URLSearchParams({ email: user.email, password: user.password, csrf: form.fields.csrf }), headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(res.status, 403, 'a token of another browser');
  const ok = await post({ email: user.email, password: user.password, csrf: form.fields.csrf });
  t.is(ok.status, 303);
  t.truthy(browser.cookie('vn_session'));
});

test('repeated failed sign-ins lock the user out, even with the right password', async (t) => {
  const user = await createUser(p);
  const browser = new TestBrowser();
  const page = await signInPage(browser);
  const attempt = async (password: string) => {
    const res = await browser.submit(page.url, page.html, { email: user.email, password });
    return { status: res.res.status, html: await res.res.text() };
  };
  t.is((await attempt('wrong password 1')).status, 401);
  t.is((await attempt('wrong password 2')).status, 401);
  const third = await attempt('wrong password 3');
  t.is(third.status, 429);
  t.regex(third.html, /locked until/);
  const right = await attempt(user.password);
  t.is(right.status, 429, 'locked: the right password is refused too');
  t.regex(right.html, /locked until/);
  const stored = await (await p.platform.service(coreServices.documents)).identity.users.findByEmail(user.email);
  t.truthy(stored?.lockedUntil);
});

test('sign-in attempts are rate limited per client address and per e-mail', async (t) => {
  const limited = await startTestPlatform({ PLUGINS: 'catalog,account,oauth', SIGNIN_PER_MINUTE: '2', SIGNIN_MAX_FAILURES: '100' });
  t.teardown(() => limited.stop());
  const user = await createUser(limited);
  const browser = new TestBrowser();
  const first = await browser.follow(`${limited.url}/oauth/sign-in`);
  const html = await first.res.text();
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    const res = await browser.submit(first.url, html, { email: user.email, password: 'not the password' });
    statuses.push(res.res.status);
    if (res.res.status === 429) t.truthy(res.res.headers.get('retry-after'));
  }
  t.deepEqual(statuses, [401, 401, 429]);
});

test('passwords are stored with a memory-hard hash, and a wrong one is refused', async (t) => {
  const user = await createUser(p);
  const stored = await (await p.platform.service(coreServices.documents)).identity.users.findByEmail(user.email);
  t.regex(stored?.passwordHash ?? '', /^scrypt\$15\$8\$1\$/);
  t.false((stored?.passwordHash ?? '').includes(user.password));
  const browser = new TestBrowser();
  const page = await signInPage(browser);
  const res = await browser.submit(page.url, page.html, { email: 'nobody@example.com', password: user.password });
  t.is(res.res.status, 401);
  t.regex(await res.res.text(), /e-mail or password is not right/);
});

test('signed in, the connected-apps page lists nothing yet; signing out ends the session', async (t) => {
  const user = await createUser(p);
  const browser = new TestBrowser();
  const page = await signInPage(browser);
  const signedIn = await browser.submit(page.url, page.html, { email: user.email, password: user.password });
  const apps = await signedIn.res.text();
  t.is(signedIn.url, `${p.url}/oauth/connected-apps`);
  t.regex(apps, /No app is connected/);
  t.regex(apps, new RegExp(`Signed in as ${user.email.replace('.', '\\.')}`));
  const out = await browser.submit(signedIn.url, apps, {}, undefined, '/oauth/sign-out');
  t.true(out.url.startsWith(`${p.url}/oauth/sign-in`));
  t.is((await browser.request(`${p.url}/oauth/connections`)).status, 401);
});

test('users are created through the admin API: e-mail once, a long enough password, an existing account', async (t) => {
  const user = await createUser(p);
  const again = await p.admin(`/accounts/${user.accountId}/users`, { method: 'POST', json: { email: user.email.toUpperCase(), password: 'another long password' } });
  t.is(again.status, 409);
  t.is(((await again.json()) as { code: string }).code, 'USER_EXISTS');
  const short = await p.admin(`/accounts/${user.accountId}/users`, { method: 'POST', json: { email: 'short@example.com', password: 'short' } });
  t.is(short.status, 400);
  const orphan = await p.admin('/accounts/acc_missing/users', { method: 'POST', json: { email: 'orphan@example.com', password: 'long enough password' } });
  t.is(orphan.status, 404);
  const list = await (await p.admin(`/accounts/${user.accountId}/users`)).json() as { users: Array<{ email: string; passwordHash?: string }> };
  t.deepEqual(list.users.map((u) => u.email), [user.email]);
  t.false('passwordHash' in list.users[0]);
  const unknown = await p.admin('/accounts/acc_missing/users');
  t.is(unknown.status, 404, 'an unknown account has no user list, as every admin route says');
  t.like(await unknown.json(), { code: 'ACCOUNT_NOT_FOUND' });
});

test('dynamic registration is rate limited per client address, refused attempts included; the 429 is in OAuth\'s error shape (RFC 7591 3.2.2) with Retry-After', async (t) => {
  const limited = await startTestPlatform({ PLUGINS: 'catalog,account,oauth', OAUTH_REGISTRATIONS_PER_HOUR: '3' });
  t.teardown(() => limited.stop());
  const register = (metadata: Record<string, unknown>) => fetch(`${limited.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
  const good = { redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' };
  const statuses = [];
  statuses.push((await register({ redirect_uris: 'not a list' })).status);
  for (let i = 0; i < 2; i++) statuses.push((await register(good)).status);
  const refused = await register(good);
  statuses.push(refused.status);
  t.deepEqual(statuses, [400, 201, 201, 429]);
  const body = (await refused.json()) as { error: string; error_description: string };
  t.is(body.error, 'temporarily_unavailable');
  t.regex(body.error_description, /at most 3 an hour/);
  t.true(Number(refused.headers.get('retry-after')) > 0);
});
