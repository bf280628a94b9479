import { definePlugin } from '../../core/plugin.ts';
import { coreServices } from '../../core/services.ts';
import { registerCatalogRoutes } from './routes.ts';

/** Engines, voices and emotion tags: `GET /engines`, `/emotion-tags`, `/voices`, `/audio/voices`. */
export default definePlugin({
  id: 'catalog',
  version: '2.0.0',
  coreApi: 2,
  description: 'Engines, voice catalogue and emotion tags',
  deps: { catalog: coreServices.catalog, billing: coreServices.billing, logger: coreServices.logger },
  register: ({ deps, route }) => registerCatalogRoutes(route, deps),
});
