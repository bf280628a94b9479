import test from 'ava';
import { openMemoryDb } from '../../core/adapters/embedded-db.ts';
import { createSqliteIdentity } from '../../core/adapters/identity/sqlite.ts';
import { createMemoryCounters } from '../../core/adapters/counters/memory.ts';
import { createIdentityService } from '../../core/identity/service.ts';
import { hashPassword, verifyPassword } from '../../core/identity/passwords.ts';
import { DomainError } from '../../core/errors.ts';

/** The identity service on its own: passwords, sessions, lockout expiry, CSRF tokens. */

function setup(overrides: Partial<{ maxFailures: number; lockoutMinutes: number; signInsPerMinute: number; sessionTtlHours: number }> = {}) {
  let now = Date.parse('2026-11-21T10:00:00.000Z');
  const db = openMemoryDb();
  const counters = createMemoryCounters();
  const identity = createIdentityService({
    store: createSqliteIdentity(db), rateLimiter: counters.rateLimiter, accountExists: async (id) => id === 'acc_1',
    settings: { sessionSecret: 'a-secret-of-sixteen+', sessionTtlHours: 1, maxFailures: 2, lockoutMinutes: 10, signInsPerMinute: 100, ...overrides },
    clock: () => new Date(now),
  });
  return { identity, advance: (ms: number) => { now += ms; }, close: () => { db.close(); void counters.close(); } };
}

const code = (err: unknown) => (err as DomainError).details.code;

test('scrypt hashes verify only their own password and differ for the same password', async (t) => {
  const a = await hashPassword('mật khẩu rất dài');
  const b = await hashPassword('mật khẩu rất dài');
  t.not(a, b, 'salted');
  t.true(await verifyPassword('mật khẩu rất dài', a));
  t.true(await verifyPassword('mật khẩu rất dài'.normalize('NFD'), a), 'compared after NFC');
  t.false(await verifyPassword('mật khẩu rất dài!', a));
  t.false(await verifyPassword('x', 'not-a-hash'));
});

test('a session lives for its TTL, then the cookie value stands for nobody', async (t) => {
  const { identity, advance, close } = setup();
  t.teardown(close);
  await identity.createUser({ accountId: 'acc_1', email: 'Mai@Example.com', password: 'long enough password' });
  const signedIn = await identity.signIn({ email: 'mai@example.com', password: 'long enough password', client: '1.2.3.4' });
  t.is((await identity.session(signedIn.token))?.user.email, 'mai@example.com');
  t.is(signedIn.session.id.length, 64, 'only the hash of the cookie value is stored');
  t.not(signedIn.session.id, signedIn.token);
  advance(3600_000);
  t.is(await identity.session(signedIn.token), null);
});

test('a lockout ends after its minutes; a success clears the count', async (t) => {
  const { identity, advance, close } = setup();
  t.teardown(close);
  await identity.createUser({ accountId: 'acc_1', email: 'minh@example.com', password: 'long enough password' });
  const attempt = (password: string) => identity.signIn({ email: 'minh@example.com', password, client: 'c' });
  t.is(code(await t.throwsAsync(attempt('wrong one'))), 'SIGN_IN_FAILED');
  t.is(code(await t.throwsAsync(attempt('wrong two'))), 'SIGN_IN_LOCKED');
  t.is(code(await t.throwsAsync(attempt('long enough password'))), 'SIGN_IN_LOCKED');
  advance(10 * 60_000 + 1);
  t.truthy(await attempt('long enough password'));
  t.is(code(await t.throwsAsync(attempt('wrong again'))), 'SIGN_IN_FAILED', 'the count started again');
});

test.serial('the lockout does not tell which e-mails exist: an e-mail no user has is locked after as many failures, until the same time, with the same words', async (t) => {
  // The counters behind an unknown e-mail's lock read the real clock: held at the service's clock, so the
  // two sequences are compared at one instant, not 5 scrypt hashes apart (under load their ends straddled a second).
  const realNow = Date.now;
  Date.now = () => Date.parse('2026-11-21T10:00:00.000Z');
  t.teardown(() => { Date.now = realNow; });
  const { identity, close } = setup({ maxFailures: 3 });
  t.teardown(close);
  await identity.createUser({ accountId: 'acc_1', email: 'lan@example.com', password: 'long enough password' });
  const answers = async (email: string) => {
    const out: Array<{ code: unknown; message: string; retryAfter: unknown }> = [];
    for (let i = 0; i < 5; i++) {
      const err = await t.throwsAsync(identity.signIn({ email, password: 'not the password', client: `c_${email}` })) as DomainError;
      out.push({ code: code(err), message: String(err.message), retryAfter: err.details.retryAfterSeconds });
    }
    return out;
  };
  const real = await answers('lan@example.com');
  const unknown = await answers('nobody@example.com');
  t.deepEqual(real.map((a) => a.code), ['SIGN_IN_FAILED', 'SIGN_IN_FAILED', 'SIGN_IN_LOCKED', 'SIGN_IN_LOCKED', 'SIGN_IN_LOCKED']);
  t.deepEqual(unknown.map((a) => a.code), real.map((a) => a.code));
  t.deepEqual(unknown.map((a) => a.message), real.map((a) => a.message), 'the same words, the same lock end');
  t.deepEqual(unknown.map((a) => a.retryAfter), real.map((a) => a.retryAfter));
});

test('what cannot be an e-mail (a 16 KB string) is never counted toward a lockout: no counter per arbitrary string', async (t) => {
  const { identity, close } = setup({ maxFailures: 2 });
  t.teardown(close);
  const junk = 'x'.repeat(16 * 1024);
  for (let i = 0; i < 4; i++) t.is(code(await t.throwsAsync(identity.signIn({ email: junk, password: 'not it', client: 'c_junk' }))), 'SIGN_IN_FAILED');
});

test('CSRF tokens are bound to what they were made for', (t) => {
  const { identity, close } = setup();
  t.teardown(close);
  const token = identity.csrfToken('nonce:session-a');
  t.true(identity.checkCsrf('nonce:session-a', token));
  t.false(identity.checkCsrf('nonce:session-b', token));
  t.false(identity.checkCsrf('nonce:session-a', undefined));
  t.false(identity.checkCsrf('nonce:session-a', token.slice(1)));
});
