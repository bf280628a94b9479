import { generateKeyPair, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { OAuthStore } from './store.ts';

/**
 * The authorization server's signing key (ID tokens, when a client asks for
 * `openid`). Made once and kept in the OAuth store, so every process of a
 * deployment signs with the same key and restarts keep it; the first process
 * to store one wins and the others read it back.
 */
export async function signingKeys(store: OAuthStore): Promise<{ keys: Array<Record<string, unknown>> }> {
  const existing = await store.find('SigningKey', 'current', Date.now());
  if (existing) return existing as { keys: Array<Record<string, unknown>> };
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
  return (await store.insertIfAbsent({ model: 'SigningKey', id: 'current', payload: { keys: [jwk] }, expiresAt: null })) as { keys: Array<Record<string, unknown>> };
}
