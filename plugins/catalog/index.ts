import { definePlugin } from '../../core/plugin.ts';
import { registerCatalogRoutes } from './routes.ts';

/** Engines, voices and emotion tags: `GET /engines`, `/emotion-tags`, `/voices`, `/audio/voices`. */
export default definePlugin({
  name: 'catalog',
  version: '1.0.0',
  description: 'Engines, voice catalogue and emotion tags',
  setup: registerCatalogRoutes,
});
