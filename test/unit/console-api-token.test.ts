import test from 'ava';
import { consoleTokens } from '../../plugins/console/api-token.ts';

/** The console's API token: the session id and an expiry, signed; nothing else is trusted. */

const SESSION = 'a'.repeat(64);

test('a minted token names its session until it expires', (t) => {
  const tokens = consoleTokens('secret-one', 15);
  const now = new Date('2026-11-21T10:00:00Z');
  const { token, expiresAt } = tokens.mint(SESSION, now);
  t.regex(token, /^vnc_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  t.is(expiresAt, '2026-11-21T10:15:00.000Z');
  t.is(tokens.read(token, new Date('2026-11-21T10:14:59Z')), SESSION);
  t.is(tokens.read(token, new Date('2026-11-21T10:15:00Z')), null, 'expired');
});

test('a token signed with another secret, or changed in any part, is refused', (t) => {
  const now = new Date('2026-11-21T10:00:00Z');
  const { token } = consoleTokens('secret-one', 15).mint(SESSION, now);
  t.is(consoleTokens('secret-two', 15).read(token, now), null);
  const [payload, signature] = token.slice(4).split('.');
  const other = Buffer.from(`${'b'.repeat(64)}.${Math.floor(now.getTime() / 1000) + 900}`).toString('base64url');
  const longer = Buffer.from(`${SESSION}.${Math.floor(now.getTime() / 1000) + 86_400}`).toString('base64url');
  const tokens = consoleTokens('secret-one', 15);
  for (const forged of [`vnc_${other}.${signature}`, `vnc_${longer}.${signature}`, `vnc_${payload}.${'A'.repeat(43)}`, `vnc_${payload}`, 'vnc_', token + 'x']) {
    t.is(tokens.read(forged, now), null, forged);
  }
});
