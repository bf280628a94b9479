/**
 * SPEC Authentication 1 and 2: the key comes in `Authorization: Bearer` or
 * `X-API-Key` (and `X-AGENT-SECRET` on `POST /agent/speech`); send one, not
 * both. README, API notes: `AMBIGUOUS_CREDENTIALS` names the headers that
 * clashed, so the caller knows which one to drop.
 */
import test from 'ava';
import { readPresentedKey } from '../../core/http/auth.ts';
import { ApiError } from '../../core/errors.ts';

const KEY = 'vn_sk_' + 'A'.repeat(32);

const refusal = (headers: NodeJS.Dict<string[]>, extraHeader?: string): ApiError => {
  try {
    readPresentedKey(headers, extraHeader);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('the headers were accepted');
};

test('one header, once, gives the key (X-AGENT-SECRET only where the route takes it)', (t) => {
  t.is(readPresentedKey({ authorization: [`Bearer ${KEY}`] }), KEY);
  t.is(readPresentedKey({ 'x-api-key': [KEY] }), KEY);
  t.is(readPresentedKey({ 'x-agent-secret': [KEY] }, 'x-agent-secret'), KEY);
  t.is(readPresentedKey({ 'x-agent-secret': [KEY] }), null);
});

const CLASHES: Array<[string, NodeJS.Dict<string[]>, string | undefined, RegExp]> = [
  ['X-AGENT-SECRET and Authorization on /agent/speech name both', { authorization: [`Bearer ${KEY}`], 'x-agent-secret': [KEY] }, 'x-agent-secret', /sent Authorization and X-AGENT-SECRET\./],
  ['X-AGENT-SECRET and X-API-Key on /agent/speech name both', { 'x-api-key': [KEY], 'x-agent-secret': [KEY] }, 'x-agent-secret', /sent X-API-Key and X-AGENT-SECRET\./],
  ['Authorization and X-API-Key name both', { authorization: [`Bearer ${KEY}`], 'x-api-key': [KEY] }, undefined, /sent Authorization and X-API-Key\./],
  ['one header twice says so', { authorization: [`Bearer ${KEY}`, `Bearer ${KEY}`] }, undefined, /sent Authorization 2 times\./],
];

for (const [rule, headers, extra, message] of CLASHES) {
  test(`AMBIGUOUS_CREDENTIALS names the headers that were sent: ${rule}`, (t) => {
    const err = refusal(headers, extra);
    t.is(err.status, 400);
    t.is(err.fields.code, 'AMBIGUOUS_CREDENTIALS');
    t.regex(err.message, message);
  });
}

test('AMBIGUOUS_CREDENTIALS lists the headers the route accepts: X-AGENT-SECRET only where it is taken', (t) => {
  t.regex(refusal({ authorization: [`Bearer ${KEY}`], 'x-agent-secret': [KEY] }, 'x-agent-secret').message, /Use Authorization: Bearer, X-API-Key or X-AGENT-SECRET\.$/);
  t.regex(refusal({ authorization: [`Bearer ${KEY}`], 'x-api-key': [KEY] }).message, /Use Authorization: Bearer or X-API-Key\.$/);
});
