import type { BackgroundWorker, CoreServices, PluginManifest, RouteDefinition } from '../plugin.ts';

export interface LoadedPlugins {
  plugins: PluginManifest[];
  routes: RouteDefinition[];
  workers: BackgroundWorker[];
}

/** Imports `plugins/<name>/index.ts` for every configured name. */
export async function importPlugins(names: string[]): Promise<PluginManifest[]> {
  const manifests: PluginManifest[] = [];
  for (const name of names) {
    let mod: { default?: PluginManifest };
    try {
      mod = await import(new URL(`../../plugins/${name}/index.ts`, import.meta.url).href);
    } catch (err) {
      throw new Error(`PLUGINS names "${name}", but plugins/${name}/index.ts could not be loaded: ${(err as Error).message}`);
    }
    if (!mod.default || typeof mod.default.setup !== 'function') {
      throw new Error(`plugins/${name}/index.ts must default-export definePlugin({...})`);
    }
    if (mod.default.name !== name) throw new Error(`plugins/${name} declares name "${mod.default.name}"; the folder and the name must match`);
    manifests.push(mod.default);
  }
  return manifests;
}

/**
 * Runs each plugin's setup with the core services and collects what it
 * registers. A route path claimed twice stops start-up: plugins are isolated
 * and may not shadow each other.
 */
export async function setupPlugins(manifests: PluginManifest[], services: CoreServices): Promise<LoadedPlugins> {
  const routes: RouteDefinition[] = [];
  const workers: BackgroundWorker[] = [];
  const owners = new Map<string, string>();
  for (const plugin of manifests) {
    await plugin.setup({
      ...services,
      logger: services.logger.child({ plugin: plugin.name }),
      route(def) {
        const id = `${def.method} ${def.path}`;
        const owner = owners.get(id);
        if (owner) throw new Error(`plugin "${plugin.name}" registers ${id}, already registered by "${owner}"`);
        owners.set(id, plugin.name);
        routes.push(def);
      },
      worker(w) {
        workers.push({ ...w, name: `${plugin.name}:${w.name}` });
      },
    });
  }
  return { plugins: manifests, routes, workers };
}
