import test from 'ava';
import { toApiError } from '../../core/http/envelopes.ts';

/** core/http/envelopes.ts: what thrown errors become. */

test('a JSON parse failure (co-body gives the parser\'s SyntaxError status 400 and the raw body) is INVALID_JSON', (t) => {
  const parse = Object.assign(new SyntaxError('Unexpected token } in JSON at position 9'), { status: 400, body: '{"text": }' });
  t.like(toApiError(parse).fields, { code: 'INVALID_JSON' });
  const proto = Object.assign(new SyntaxError('Object contains forbidden prototype property'), { status: 400, body: '{"__proto__":{}}' });
  t.like(toApiError(proto).fields, { code: 'VALIDATION_FAILED' });
});

test('a plugin\'s upstream HTTP error of the same shape (status 400, a body) is not taken for the caller\'s JSON', (t) => {
  const upstream = Object.assign(new Error('lexicon service said 400'), { status: 400, body: '{"error":"bad word"}' });
  const err = toApiError(upstream);
  t.is(err.status, 400);
  t.not(err.fields.code, 'INVALID_JSON');
  t.notRegex(String(err.messages), /not valid JSON/);
});
