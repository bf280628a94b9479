import test from 'ava';
import { createDownloadLinks } from '../../core/downloads.ts';

/** Presigned download links: a link verifies in the one spelling it was signed in, and no other. */
const downloads = createDownloadLinks('a-url-signing-secret-of-32-chars!', 'https://api.example.test');
const NOW = new Date('2026-11-29T12:00:00Z');

function parts(url: string) {
  const u = new URL(url);
  return { key: decodeURIComponent(u.pathname.replace(/^\/files\//, '')), expires: u.searchParams.get('expires')!, signature: u.searchParams.get('signature')! };
}

test('a signed link verifies as issued; another expiry, another key or an expired link does not', (t) => {
  const { key, expires, signature } = parts(downloads.sign('jobs/job_1.wav', 3600, { now: NOW }).url);
  t.true(downloads.verify(key, expires, signature, { now: NOW }));
  t.false(downloads.verify(key, String(Number(expires) + 1), signature, { now: NOW }));
  t.false(downloads.verify('jobs/job_2.wav', expires, signature, { now: NOW }));
  t.false(downloads.verify(key, expires, signature, { now: new Date(NOW.getTime() + 3601_000) }));
});

test('other spellings of the same expiry or signature are refused (they all verified: Number() and Buffer hex decoding are lenient)', (t) => {
  const { key, expires, signature } = parts(downloads.sign('jobs/job_1.wav', 3600, { now: NOW }).url);
  const n = Number(expires);
  for (const spelling of [`0x${n.toString(16)}`, `${n / 1e9}e9`, ` ${expires}`, `0${expires}`, `${expires}.0`, `+${expires}`]) {
    t.false(downloads.verify(key, spelling, signature, { now: NOW }), `expires=${spelling}`);
  }
  for (const spelling of [`${signature}zz`, `${signature}0`, signature.toUpperCase(), `${signature}-x`, signature.slice(0, 62)]) {
    t.false(downloads.verify(key, expires, spelling, { now: NOW }), `signature=${spelling}`);
  }
});
