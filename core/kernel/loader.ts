import { ConfigError } from '../../config/load.ts';
import type { PluginDefinition } from '../plugin.ts';

/** A loaded feature: a route plugin (plugins/<id>) or a background module (inference, pipelines/<id>). */
export interface Feature {
  /** folder relative to the project root */
  folder: string;
  definition: PluginDefinition<any, any>;
}

const ROOT = new URL('../..', import.meta.url);
// Compiled code (dist/) imports .js; the sources run through tsx import .ts.
const EXTENSION = import.meta.url.endsWith('.ts') ? 'ts' : 'js';

async function importFeature(folder: string, setting: 'PLUGINS' | 'MODULES'): Promise<Feature> {
  const id = folder.split('/').pop()!;
  let mod: { default?: PluginDefinition<any, any> };
  try {
    mod = await import(new URL(`${folder}/index.${EXTENSION}`, ROOT).href);
  } catch (err) {
    throw new ConfigError(`${setting} names "${folder === `plugins/${id}` ? id : folder}", but ${folder}/index.${EXTENSION} could not be loaded: ${(err as Error).message}`);
  }
  const definition = mod.default;
  if (!definition || typeof definition.register !== 'function') {
    throw new ConfigError(`${folder}/index.${EXTENSION} must default-export definePlugin({...})`);
  }
  if (definition.id !== id) throw new ConfigError(`${folder} declares id "${definition.id}"; the folder and the id must match`);
  return { folder, definition };
}

/** Imports every configured route plugin and module, in the order configured. */
export async function importFeatures(config: { plugins: string[]; modules: string[] }): Promise<Feature[]> {
  const features: Feature[] = [];
  for (const id of config.plugins) features.push(await importFeature(`plugins/${id}`, 'PLUGINS'));
  for (const folder of config.modules) features.push(await importFeature(folder, 'MODULES'));
  return features;
}
