import test from 'ava';
import { buildOutcomeEvent, newOutcome } from '../../core/http/outcome.ts';

/** SPEC Usage: `denied` is 4xx, not billed; what a refused request carried is not usage. */
const event = (status: number, characters: number) => {
  const outcome = { ...newOutcome('tts_stream', true), characters, voice: 'vi-north-female-mai', engine: 'v4' };
  return buildOutcomeEvent({ requestId: 'req_1', accountId: 'acct_1', keyId: 'key_1', status, outcome, errorCode: null });
};

test('SPEC Usage: a denied request counts no characters, however far its route got before refusing (a stream slot)', (t) => {
  t.like(event(429, 1892), { result: 'denied', characters: 0, errorCode: 'http_429' });
  t.like(event(403, 60), { result: 'denied', characters: 0 });
});

test('SPEC Usage: an answered or failed request counts the characters its route annotated', (t) => {
  t.like(event(200, 1892), { result: 'ok', characters: 1892 });
  t.like(event(500, 60), { result: 'error', characters: 60 });
});
