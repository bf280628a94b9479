import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';

/**
 * The built front end (`npm run build` → dist/console), read into memory at
 * start-up: a few small files, so serving needs no file-system access per
 * request and no path from a request ever reaches the disk. Hashed assets
 * are cached for a year (`immutable`); the page itself is revalidated.
 */

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export interface ConsoleAssets {
  /** null when the front end has not been built */
  index: Asset | null;
  /** by path below `assets/` */
  files: Map<string, Asset>;
  dir: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};

function asset(file: string): Asset {
  const body = readFileSync(file);
  return { body, type: TYPES[path.extname(file)] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}

export function loadAssets(dir: string): ConsoleAssets {
  const indexFile = path.join(dir, 'index.html');
  const files = new Map<string, Asset>();
  if (!existsSync(indexFile)) return { index: null, files, dir };
  const assetsDir = path.join(dir, 'assets');
  if (existsSync(assetsDir)) for (const name of walk(assetsDir)) files.set(name, asset(path.join(assetsDir, name)));
  return { index: asset(indexFile), files, dir };
}

/** Answers with an asset, honouring If-None-Match. */
export function sendAsset(ctx: Koa.Context, file: Asset, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('ETag', file.etag);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  if (ctx.get('if-none-match') === file.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = file.type;
  ctx.body = file.body;
}

/**
 * Headers of the console page: a strict Content-Security-Policy (scripts and
 * styles only from this origin's built files, no inline code, no framing,
 * network only to this origin, media from this origin, in-memory audio and
 * the download links' origin), and the rest of the page security headers of
 * core/http/page-security.ts.
 */
export function applyConsoleSecurity(ctx: Koa.Context, mediaOrigins: string[]): void {
  const media = ["'self'", 'blob:', ...mediaOrigins].join(' ');
  ctx.set('Content-Security-Policy', [
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", `media-src ${media}`,
    "connect-src 'self'", "font-src 'self'", "manifest-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'", "object-src 'none'",
  ].join('; '));
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
  if (ctx.secure) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
}
