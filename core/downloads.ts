import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Presigned download links for blobs: `<base>/files/<key>?expires=<unix>&signature=<hex>`.
 * Whatever stores the blob, downloads are served by core after checking the
 * signature, so links work the same on every adapter.
 */
export interface DownloadLinks {
  /** mints a link valid for `ttlSeconds` */
  sign(key: string, ttlSeconds: number, now?: Date): { url: string; expiresAt: string; expiresIn: number };
  /** true when the signature matches and the link has not expired */
  verify(key: string, expires: string, signature: string, now?: Date): boolean;
  setBaseUrl(url: string): void;
  baseUrl(): string;
}

export function createDownloadLinks(secret: string, initialBaseUrl: string): DownloadLinks {
  let base = initialBaseUrl.replace(/\/$/, '');
  const mac = (key: string, expires: number) => createHmac('sha256', secret).update(`${key}\n${expires}`).digest('hex');
  return {
    sign(key, ttlSeconds, now = new Date()) {
      const expires = Math.floor(now.getTime() / 1000) + ttlSeconds;
      const path = key.split('/').map(encodeURIComponent).join('/');
      return {
        url: `${base}/files/${path}?expires=${expires}&signature=${mac(key, expires)}`,
        expiresAt: new Date(expires * 1000).toISOString(),
        expiresIn: ttlSeconds,
      };
    },
    verify(key, expires, signature, now = new Date()) {
      const exp = Number(expires);
      if (!Number.isInteger(exp) || exp * 1000 < now.getTime()) return false;
      const expected = Buffer.from(mac(key, exp), 'hex');
      const given = Buffer.from(signature, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    setBaseUrl(url) {
      base = url.replace(/\/$/, '');
    },
    baseUrl: () => base,
  };
}
