import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `job` binds a link to the job it was handed out for, which a cache hit's
 * link does not name in its key (the key is the rendering job's file): a
 * damaged file reached through it refunds the job whose caller is told so.
 */
export interface LinkOptions {
  now?: Date;
  job?: string;
}

/**
 * Presigned download links for blobs: `<base>/files/<key>?expires=<unix>[&job=<id>]&signature=<hex>`.
 * Whatever stores the blob, downloads are served by core after checking the
 * signature, so links work the same on every adapter.
 */
export interface DownloadLinks {
  /** mints a link valid for `ttlSeconds` */
  sign(key: string, ttlSeconds: number, options?: LinkOptions): { url: string; expiresAt: string; expiresIn: number };
  /** true when the signature matches (the job too, when the link names one) and the link has not expired */
  verify(key: string, expires: string, signature: string, options?: LinkOptions): boolean;
  setBaseUrl(url: string): void;
  baseUrl(): string;
}

export function createDownloadLinks(secret: string, initialBaseUrl: string): DownloadLinks {
  let base = initialBaseUrl.replace(/\/$/, '');
  // Links without a job keep the MAC they always had, so those already handed out stay valid.
  const mac = (key: string, expires: number, job: string | undefined) =>
    createHmac('sha256', secret).update(job === undefined ? `${key}\n${expires}` : `${key}\n${expires}\n${job}`).digest('hex');
  return {
    sign(key, ttlSeconds, { now = new Date(), job } = {}) {
      const expires = Math.floor(now.getTime() / 1000) + ttlSeconds;
      const path = key.split('/').map(encodeURIComponent).join('/');
      const bound = job === undefined ? '' : `&job=${encodeURIComponent(job)}`;
      return {
        url: `${base}/files/${path}?expires=${expires}${bound}&signature=${mac(key, expires, job)}`,
        expiresAt: new Date(expires * 1000).toISOString(),
        expiresIn: ttlSeconds,
      };
    },
    verify(key, expires, signature, { now = new Date(), job } = {}) {
      // Only the spelling sign() writes: Number() also read "0x…", "1.7e9" and " 17…", and Buffer's hex decoding stopped at
      // the first stray character, so one link had endless valid spellings (no use for revoking or matching by URL).
      if (!/^[1-9]\d{0,11}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
      const exp = Number(expires);
      if (exp * 1000 < now.getTime()) return false;
      const expected = Buffer.from(mac(key, exp, job), 'hex');
      const given = Buffer.from(signature, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    setBaseUrl(url) {
      base = url.replace(/\/$/, '');
    },
    baseUrl: () => base,
  };
}
