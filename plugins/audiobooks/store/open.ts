import type { PluginDatabase } from '../../../core/services.ts';
import type { AudiobookStore } from './port.ts';

/** The store on whatever system of record the platform runs on. */
export async function openAudiobookStore(database: PluginDatabase): Promise<AudiobookStore> {
  if (database.kind === 'mongo') {
    const { createMongoAudiobookStore } = await import('./mongo.ts');
    return createMongoAudiobookStore(database.mongo(), database.prefix);
  }
  const { createSqliteAudiobookStore } = await import('./sqlite.ts');
  return createSqliteAudiobookStore(database.sqlite(), database.prefix);
}
