import test from 'ava';
import { renderFailure } from '../../core/speechkit/timeline/failures.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { AbortError } from '../../core/speechkit/abort.ts';

/** What /dialogue, /srt and /dub answer when a paid render fails (core/speechkit/timeline/failures.ts). */
const table: Array<[string, unknown, { kind: string; code?: string; usageCode: string; retryAfterSeconds?: number }]> = [
  ['no worker for the voice', new EngineUnavailableError('down'), { kind: 'unavailable', usageCode: 'synthesis_unavailable' }],
  ['a render cut by shutdown', new AbortError(), { kind: 'unavailable', usageCode: 'synthesis_unavailable' }],
  ['the audio directory is full', Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
    { kind: 'unavailable', code: 'SERVICE_UNAVAILABLE', usageCode: 'synthesis_unavailable', retryAfterSeconds: 5 }],
  ['GridFS out of reach', Object.assign(new Error('connection closed'), { name: 'MongoNetworkError' }),
    { kind: 'unavailable', code: 'SERVICE_UNAVAILABLE', usageCode: 'synthesis_unavailable', retryAfterSeconds: 5 }],
  ['anything else', new Error('turn 2 produced no audio'), { kind: 'failed', usageCode: 'synthesis_failed' }],
];

for (const [what, error, expected] of table) {
  test(`a paid render that failed because ${what} is ${expected.kind === 'unavailable' ? '503' : '500'}, refunded`, (t) => {
    const failure = renderFailure(error, true);
    t.is(failure.kind as string, expected.kind);
    t.like(failure.details, { usageCode: expected.usageCode, ...(expected.code ? { code: expected.code, retryAfterSeconds: expected.retryAfterSeconds } : {}) });
    t.true(failure.message.endsWith('The tokens were refunded.'));
  });
}
