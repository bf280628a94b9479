import { DomainError } from '../../errors.ts';
import type { AuthContext } from '../../http/auth.ts';

/** SPEC: a test key (`vn_test_`) caps each request at 100 whitespace-separated words. */
export const TEST_KEY_MAX_WORDS = 100;

export function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/u).length;
}

export function enforceTestKeyWordCap(auth: AuthContext | null, text: string, param = 'text'): void {
  if (auth?.keyKind !== 'test') return;
  const words = countWords(text);
  if (words > TEST_KEY_MAX_WORDS) {
    throw new DomainError('invalid', `Test keys are limited to ${TEST_KEY_MAX_WORDS} words per request; this text has ${words}. Use a live key (vn_sk_) for longer text.`, {
      code: 'TEST_KEY_WORD_LIMIT',
      param,
    });
  }
}
