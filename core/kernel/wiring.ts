import { ConfigError } from '../../config/load.ts';
import { CORE_API_VERSION, type BackgroundWorker, type MountDefinition, type ReadinessCheck, type RouteDefinition } from '../plugin.ts';
import type { CredentialVerifier } from '../http/auth.ts';
import type { ServiceRegistry } from './registry.ts';
import type { Feature } from './loader.ts';

export interface OwnedRoute extends RouteDefinition {
  plugin: string;
}

export interface Wired {
  routes: OwnedRoute[];
  mounts: Array<MountDefinition & { plugin: string }>;
  workers: BackgroundWorker[];
  readiness: ReadinessCheck[];
  authenticators: CredentialVerifier[];
  /** every wired feature, for the API reference's groups */
  plugins: Array<{ id: string; description: string }>;
}

/** Refuses a feature written for another core API, a duplicate id, a missing or circular dependency. */
function checkManifests(features: Feature[]): void {
  const ids = new Map<string, string>();
  for (const { folder, definition } of features) {
    if (definition.coreApi !== CORE_API_VERSION) {
      throw new ConfigError(`${folder} was written for core API ${definition.coreApi}; this core provides API ${CORE_API_VERSION}`);
    }
    const other = ids.get(definition.id);
    if (other) throw new ConfigError(`${folder} and ${other} both declare id "${definition.id}"`);
    ids.set(definition.id, folder);
  }
  for (const { folder, definition } of features) {
    for (const needed of definition.dependsOn ?? []) {
      if (!ids.has(needed)) throw new ConfigError(`${folder} depends on plugin "${needed}", which is not loaded: add it to PLUGINS`);
    }
  }
}

/** Dependencies first; a cycle is refused with its path. */
function inDependencyOrder(features: Feature[]): Feature[] {
  const byId = new Map(features.map((f) => [f.definition.id, f]));
  const done = new Set<string>();
  const visiting: string[] = [];
  const out: Feature[] = [];
  const visit = (f: Feature) => {
    const id = f.definition.id;
    if (done.has(id)) return;
    if (visiting.includes(id)) throw new ConfigError(`plugins depend on each other in a cycle: ${[...visiting, id].join(' -> ')}`);
    visiting.push(id);
    for (const dep of f.definition.dependsOn ?? []) visit(byId.get(dep)!);
    visiting.pop();
    done.add(id);
    out.push(f);
  };
  features.forEach(visit);
  return out;
}

/** Validates every feature's own config section against the settings as read; all problems in one message. */
function featureConfigs(features: Feature[], source: Record<string, unknown>): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const problems: string[] = [];
  for (const { definition } of features) {
    if (!definition.config) {
      values.set(definition.id, {});
      continue;
    }
    const { value, error } = definition.config.validate(source, { abortEarly: false, convert: true, allowUnknown: true, stripUnknown: true });
    if (error) problems.push(...error.details.map((d) => `plugin ${definition.id}: ${d.message}`));
    values.set(definition.id, value);
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  return values;
}

/** Engine feature names (`GET /engines`) served by the loaded plugins. */
export function engineFeaturesOf(features: Feature[]): Set<string> {
  return new Set(features.flatMap((f) => f.definition.engineFeatures ?? []));
}

/**
 * Registers every feature: its provided services first (so order does not
 * matter for services), then each `register` in dependency order with exactly
 * the services it declared. A path claimed twice stops start-up.
 */
export async function wireFeatures(features: Feature[], registry: ServiceRegistry, source: Record<string, unknown>): Promise<Wired> {
  checkManifests(features);
  const configs = featureConfigs(features, source);
  for (const { definition } of features) for (const factory of definition.provides ?? []) registry.provide(factory, definition.id);

  const wired: Wired = { routes: [], mounts: [], workers: [], readiness: [], authenticators: [], plugins: [] };
  const owners = new Map<string, string>();
  const claim = (what: string, plugin: string) => {
    const owner = owners.get(what);
    if (owner) throw new ConfigError(`plugin "${plugin}" registers ${what}, already registered by "${owner}"`);
    owners.set(what, plugin);
  };
  for (const { definition } of inDependencyOrder(features)) {
    const id = definition.id;
    wired.plugins.push({ id, description: definition.description });
    let deps;
    try {
      deps = await registry.resolve(definition.deps, id);
    } catch (err) {
      throw new ConfigError(`plugin "${id}" cannot start: ${(err as Error).message}`);
    }
    await definition.register({
      deps,
      config: configs.get(id),
      route(def) {
        claim(`${def.method} ${def.path}`, id);
        wired.routes.push({ ...def, plugin: id });
      },
      mount(def) {
        claim(`mount ${def.prefix}`, id);
        wired.mounts.push({ ...def, plugin: id });
      },
      worker(w) {
        wired.workers.push({ ...w, name: `${id}:${w.name}` });
      },
      readiness(check) {
        wired.readiness.push({ ...check, name: `${id}:${check.name}` });
      },
      authenticator(verifier) {
        claim(`credential verifier ${verifier.name}`, id);
        wired.authenticators.push(verifier);
      },
    });
  }
  return wired;
}
