import test from 'ava';
import { createHmac } from 'node:crypto';
import { liveSecrets, signatureHeader } from '../../pipelines/webhook-dispatcher/signature.ts';
import { verifyWebhookSignature } from '../../pipelines/webhook-dispatcher/verify.ts';

/**
 * SPEC "Signature". Expected values are computed here with node:crypto from
 * the rule's own words, never with the code under test:
 * v1 = hex HMAC-SHA256(key = secret, message = `<t>.` + raw body bytes).
 */
const OLD = 'whsec_old_0123456789abcdefghijklmnop';
const NEW = 'whsec_new_zyxwvutsrqponmlkjihgfedcba';
const BODY = Buffer.from('{"id":"evt_c_job_1","type":"tts.job.completed","data":{"job_id":"job_1","text":"Xin chào"}}');
const T = 1_795_000_000;
const AT = (seconds: number) => new Date(seconds * 1000);

const hmac = (secret: string, t: number, body: Buffer) => createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');

test('the signing side writes t=<unix>,v1=<hex HMAC-SHA256 of "<t>." + raw body>', (t) => {
  t.is(signatureHeader(BODY, [NEW], T), `t=${T},v1=${hmac(NEW, T, BODY)}`);
});

test('during rotation the signing side writes one v1 per live secret', (t) => {
  t.is(signatureHeader(BODY, [NEW, OLD], T), `t=${T},v1=${hmac(NEW, T, BODY)},v1=${hmac(OLD, T, BODY)}`);
});

test('the previous secret is live for 24 hours after rotation, then no longer signs', (t) => {
  const secrets = [
    { secret: NEW, expiresAt: null },
    { secret: OLD, expiresAt: '2026-11-22T10:00:00.000Z' },
  ];
  t.deepEqual(liveSecrets(secrets, new Date('2026-11-22T09:59:59.000Z')), [NEW, OLD]);
  t.deepEqual(liveSecrets(secrets, new Date('2026-11-22T10:00:00.000Z')), [NEW]);
});

test('a correctly signed body verifies', (t) => {
  const header = `t=${T},v1=${hmac(NEW, T, BODY)}`;
  t.deepEqual(verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T + 10) }), { valid: true, timestamp: T });
  t.true(verifyWebhookSignature({ rawBody: BODY.toString('utf8'), header, secrets: [NEW], now: AT(T) }).valid, 'a string body is taken as its UTF-8 bytes');
});

test('verification uses the raw bytes: re-serialised JSON, a changed byte or another timestamp fails', (t) => {
  const header = `t=${T},v1=${hmac(NEW, T, BODY)}`;
  const reserialised = Buffer.from(JSON.stringify(JSON.parse(BODY.toString()), null, 1));
  t.like(verifyWebhookSignature({ rawBody: reserialised, header, secrets: NEW, now: AT(T) }), { valid: false, reason: 'no_matching_signature' });
  const tampered = Buffer.from(BODY);
  tampered[10] ^= 1;
  t.false(verifyWebhookSignature({ rawBody: tampered, header, secrets: NEW, now: AT(T) }).valid);
  t.false(verifyWebhookSignature({ rawBody: BODY, header: `t=${T + 1},v1=${hmac(NEW, T, BODY)}`, secrets: NEW, now: AT(T) }).valid);
  t.false(verifyWebhookSignature({ rawBody: BODY, header, secrets: OLD, now: AT(T) }).valid, 'another secret does not verify');
});

test('rotation: a header with two v1 values verifies with either secret alone', (t) => {
  const header = `t=${T},v1=${hmac(NEW, T, BODY)},v1=${hmac(OLD, T, BODY)}`;
  t.true(verifyWebhookSignature({ rawBody: BODY, header, secrets: OLD, now: AT(T) }).valid);
  t.true(verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T) }).valid);
  t.true(verifyWebhookSignature({ rawBody: BODY, header, secrets: ['whsec_unrelated', NEW], now: AT(T) }).valid, 'any v1 matching any secret accepts');
  t.false(verifyWebhookSignature({ rawBody: BODY, header, secrets: 'whsec_unrelated', now: AT(T) }).valid);
});

test('a timestamp more than 300 seconds away is refused by default; the tolerance can be set', (t) => {
  const header = `t=${T},v1=${hmac(NEW, T, BODY)}`;
  t.true(verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T + 300) }).valid);
  t.like(verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T + 301) }), { valid: false, reason: 'timestamp_out_of_tolerance' });
  t.like(verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T - 301) }), { valid: false, reason: 'timestamp_out_of_tolerance' });
  t.true(verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T + 3000), toleranceSeconds: 3600 }).valid);
  t.false(verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T + 61), toleranceSeconds: 60 }).valid);
});

test('tolerance 0 (which would disable the replay check) is refused with an error', (t) => {
  const header = `t=${T},v1=${hmac(NEW, T, BODY)}`;
  t.throws(() => verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T), toleranceSeconds: 0 }), { instanceOf: RangeError, message: /toleranceSeconds/ });
  t.throws(() => verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, toleranceSeconds: -5 }), { instanceOf: RangeError });
  t.throws(() => verifyWebhookSignature({ rawBody: BODY, header, secrets: [], now: AT(T) }), { instanceOf: TypeError });
});

test('schemes other than v1 are ignored', (t) => {
  const good = hmac(NEW, T, BODY);
  const header = `t=${T},v0=${'0'.repeat(64)},v2=${hmac(NEW, T, BODY).toUpperCase()},v1=${good},scheme=x`;
  t.true(verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T) }).valid);
  // a valid HMAC under another scheme name is not accepted as v1
  t.like(verifyWebhookSignature({ rawBody: BODY, header: `t=${T},v2=${good}`, secrets: NEW, now: AT(T) }), { valid: false, reason: 'malformed_header' });
});

test('missing or malformed headers are refused, not thrown', (t) => {
  const v1 = hmac(NEW, T, BODY);
  const verdict = (header: string | undefined) => verifyWebhookSignature({ rawBody: BODY, header, secrets: NEW, now: AT(T) });
  t.like(verdict(undefined), { valid: false, reason: 'missing_header' });
  t.like(verdict(''), { valid: false, reason: 'missing_header' });
  t.like(verdict(`v1=${v1}`), { valid: false, reason: 'malformed_header' });
  t.like(verdict(`t=${T}`), { valid: false, reason: 'malformed_header' });
  t.like(verdict(`t=abc,v1=${v1}`), { valid: false, reason: 'malformed_header' });
  t.like(verdict(`t=${T},t=${T},v1=${v1}`), { valid: false, reason: 'malformed_header' });
  t.like(verdict(`t=${T},v1=${v1.slice(2)}`), { valid: false, reason: 'malformed_header' }, 'a truncated v1 is not a candidate');
  t.like(verdict(`garbage`), { valid: false, reason: 'malformed_header' });
});
