import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console's front end (plugins/console/web) built by `npm run build`
 * into dist/console, which the plugin serves under /console. CONSOLE_OUT_DIR
 * builds elsewhere (the browser tests build a fresh copy for themselves).
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const repository = path.resolve(here, '../..');

export default defineConfig({
  root: path.join(here, 'web'),
  base: '/console/',
  publicDir: false,
  logLevel: process.env.CONSOLE_BUILD_QUIET === '1' ? 'warn' : 'info',
  build: {
    outDir: process.env.CONSOLE_OUT_DIR ?? path.join(repository, 'dist', 'console'),
    emptyOutDir: true,
    target: 'es2022',
    // The page's CSP allows no inline code: no preload polyfill, nothing inlined as data: URLs.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    chunkSizeWarningLimit: 150,
  },
  server: { fs: { allow: [repository] } },
});
