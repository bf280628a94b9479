import { createHmac } from 'node:crypto';

/**
 * Signing side of SPEC "Signature": `t=<unix>,v1=<hex>[,v1=<hex>...]`, each
 * v1 the hex HMAC-SHA256 of `<t>.` followed by the raw body bytes, keyed by
 * one live secret (the whole `whsec_...` string). During rotation every live
 * secret signs, so a receiver holding either the old or the new one verifies.
 */
export function signatureHeader(rawBody: Buffer, secrets: string[], timestamp: number): string {
  if (secrets.length === 0) throw new Error('a delivery needs at least one live signing secret');
  const prefix = Buffer.from(`${timestamp}.`);
  const v1 = secrets.map((secret) => createHmac('sha256', secret).update(prefix).update(rawBody).digest('hex'));
  return [`t=${timestamp}`, ...v1.map((sig) => `v1=${sig}`)].join(',');
}

/** Secrets that still sign at `now`: the current one and those rotated out less than 24 h ago. */
export function liveSecrets(secrets: Array<{ secret: string; expiresAt: string | null }>, now: Date): string[] {
  return secrets.filter((s) => s.expiresAt === null || Date.parse(s.expiresAt) > now.getTime()).map((s) => s.secret);
}
