import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Joi from 'joi';
import Router from '@koa/router';
import type { RouteDefinition } from '../../plugin.ts';
import { ApiError } from '../../errors.ts';
import type { JsonSchema } from './json-schema.ts';

/**
 * Where the reference is served: the document at `GET /api/v1/openapi.json`
 * (a route like the others, so it documents itself) and a readable page at
 * `GET /docs`, rendered in the browser by Swagger UI from swagger-ui-dist's
 * static files, which are served from this process (no CDN).
 */

export const DOCUMENT_PATH = '/openapi.json';
export const PAGE_PATH = '/docs';

/** The files of swagger-ui-dist the page loads, and their types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const documentSchema = Joi.object({
  openapi: Joi.string().required(),
  info: Joi.object({ title: Joi.string().required(), version: Joi.string().required() }).unknown(true).required(),
}).unknown(true).description('An OpenAPI 3.1 document');

export function documentRoute(document: () => JsonSchema): RouteDefinition {
  let json: string | null = null;
  return {
    method: 'GET', path: DOCUMENT_PATH, auth: 'none', name: 'openapi',
    summary: 'This API reference as an OpenAPI 3.1 document',
    description: 'Built from the route definitions and joi schemas the server validates with; no key needed. A readable rendering is at `/docs`.',
    responses: { 200: { description: 'The OpenAPI 3.1 document', schema: documentSchema } },
    handler: async (ctx) => {
      // Built once, on first request: the base URL is known by then.
      json ??= JSON.stringify(document());
      ctx.type = 'application/json';
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.body = json;
    },
  };
}

function page(nonce: string): string {
  return `<!doctype html>
<html lang="vi">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>VieNeu Text-to-Speech API reference</title>
<link rel="icon" type="image/png" href="${PAGE_PATH}/assets/favicon-32x32.png">
<link rel="stylesheet" href="${PAGE_PATH}/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="${PAGE_PATH}/assets/swagger-ui-bundle.js"></script>
<script nonce="${nonce}">
window.ui = SwaggerUIBundle({ url: '/api/v1${DOCUMENT_PATH}', dom_id: '#reference', deepLinking: true, validatorUrl: null, tryItOutEnabled: false, docExpansion: 'list' });
</script>
</body>
</html>
`;
}

/** `GET /docs` and its assets. */
export function referencePage(): Router {
  // The package's directory, without loading its browser bundle into this process.
  const dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const router = new Router();
  router.get(PAGE_PATH, (ctx) => {
    const nonce = randomBytes(16).toString('base64');
    // Swagger UI styles its widgets inline and fetches the document: allowed from this origin only.
    ctx.set('Content-Security-Policy', [
      "default-src 'none'", `script-src 'self' 'nonce-${nonce}'`, "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
      "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
    ].join('; '));
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(nonce);
  });
  router.get(`${PAGE_PATH}/assets/:file`, (ctx) => {
    const type = Object.hasOwn(ASSETS, ctx.params.file) ? ASSETS[ctx.params.file] : undefined;
    if (!type) throw new ApiError(404, `No asset ${ctx.params.file}.`, { code: 'ROUTE_NOT_FOUND' });
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = createReadStream(path.join(dir, ctx.params.file));
  });
  return router;
}
