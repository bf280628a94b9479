import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Receiver-side check of `Service-Signature` (SPEC "Signature"). Exported for
 * receivers written in TypeScript and used by the README's example.
 *
 * - `rawBody` must be the bytes as received, before any JSON parsing;
 * - `secrets`: one or more signing secrets; any `v1` matching any secret accepts;
 * - `toleranceSeconds` (default 300): a `t` further than this from `now` is refused.
 *   0 would disable the check and is refused with an error;
 * - schemes other than `v1` are ignored; comparisons are constant-time.
 */
export interface VerifyInput {
  rawBody: Buffer | Uint8Array | string;
  header: string | null | undefined;
  secrets: string | string[];
  toleranceSeconds?: number;
  now?: Date;
}

export type VerifyResult =
  | { valid: true; timestamp: number }
  | { valid: false; reason: 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'no_matching_signature'; timestamp?: number };

export function verifyWebhookSignature(input: VerifyInput): VerifyResult {
  const tolerance = input.toleranceSeconds ?? 300;
  if (!Number.isFinite(tolerance) || tolerance <= 0) {
    throw new RangeError('toleranceSeconds must be a positive number of seconds; 0 would disable the replay check.');
  }
  const secrets = Array.isArray(input.secrets) ? input.secrets : [input.secrets];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new TypeError('secrets must be one or more non-empty signing secrets.');
  }
  if (!input.header) return { valid: false, reason: 'missing_header' };

  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const element of input.header.split(',')) {
    const eq = element.indexOf('=');
    if (eq <= 0) return { valid: false, reason: 'malformed_header' };
    const scheme = element.slice(0, eq).trim();
    const value = element.slice(eq + 1).trim();
    if (scheme === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(value)) return { valid: false, reason: 'malformed_header' };
      timestamp = Number(value);
    } else if (scheme === 'v1') {
      if (/^[0-9a-f]{64}$/i.test(value)) signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null || signatures.length === 0) return { valid: false, reason: 'malformed_header' };

  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > tolerance) return { valid: false, reason: 'timestamp_out_of_tolerance', timestamp };

  const body = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : input.rawBody;
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
    // No early exit: every candidate is compared so timing says nothing about which one matched.
    for (const candidate of signatures) matched = timingSafeEqual(expected, candidate) || matched;
  }
  return matched ? { valid: true, timestamp } : { valid: false, reason: 'no_matching_signature', timestamp };
}
