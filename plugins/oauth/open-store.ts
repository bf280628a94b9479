import type { PluginDatabase } from '../../core/services.ts';
import type { OAuthStore } from './store.ts';

/** The store on whatever system of record the platform runs on. */
export async function openOAuthStore(database: PluginDatabase): Promise<OAuthStore> {
  if (database.kind === 'mongo') {
    const { createMongoOAuthStore } = await import('./store-mongo.ts');
    return createMongoOAuthStore(database.mongo(), database.prefix);
  }
  const { createSqliteOAuthStore } = await import('./store-sqlite.ts');
  return createSqliteOAuthStore(database.sqlite(), database.prefix);
}
